package phases

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// ccmRun is a run with the real API of envtest.
type ccmRun struct {
	kc       *kube.Client
	rendered Rendered
	log      bytes.Buffer
	hidden   []string
}

func (r *ccmRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *ccmRun) Rendered() Rendered                         { return r.rendered }
func (r *ccmRun) hide(values ...string)                      { r.hidden = append(r.hidden, values...) }
func (r *ccmRun) Logf(host, format string, args ...any) {
	fmt.Fprintf(&r.log, host+": "+format+"\n", args...)
}

// TestCloudControllerPhase applies the rendered cloud-controller-manager to a real API server:
// every object is accepted, the phase waits for the DaemonSet to run on the control planes (the
// test stands in for the DaemonSet controller, which envtest lacks, through the status
// subresource) and records the hash; the credentials reach the Secret and nothing else (not the
// log, and they are handed to the run's redaction); the ServiceAccount may do what its
// controllers need and may not read Secrets; and applying the same objects again changes nothing.
func TestCloudControllerPhase(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const password = "ccm-phase-password-4711"
	creds := map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin", "OS_PASSWORD": password,
		"OS_PROJECT_NAME": "demo", "OS_USER_DOMAIN_NAME": "Default", "OS_CACERT": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}
	c := &v1beta1.Cluster{Name: "phase", CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}}
	objs, err := ccmdeploy.Render(c, creds)
	if err != nil {
		t.Fatal(err)
	}
	r := &ccmRun{kc: kc, rendered: Rendered{CloudController: objs, CloudControllerHash: "ccm-hash-1", CloudControllerSecrets: ccmdeploy.Secrets(creds)}}

	done := make(chan error, 1)
	go func() { done <- deployCloudController(ctx, r) }()
	// The DaemonSet controller's part: one pod scheduled, updated and available, on one control plane.
	dss := env.Kube.AppsV1().DaemonSets(ccmdeploy.Namespace)
	envtest.Eventually(t, time.Minute, "the DaemonSet to be applied", func() (bool, string) {
		ds, err := dss.Get(ctx, ccmdeploy.DaemonSet, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ds.Status.ObservedGeneration = ds.Generation
		ds.Status.DesiredNumberScheduled, ds.Status.CurrentNumberScheduled = 1, 1
		ds.Status.UpdatedNumberScheduled, ds.Status.NumberAvailable, ds.Status.NumberReady = 1, 1, 1
		if _, err := dss.UpdateStatus(ctx, ds, metav1.UpdateOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the phase: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the phase did not see the DaemonSet available")
	}
	if got, err := applied.Addons(ctx, kc); err != nil || got["cloud-controller-manager"] != "ccm-hash-1" {
		t.Errorf("recorded %v (%v), want the hash the plan compared", got, err)
	}
	if strings.Contains(r.log.String(), password) || !strings.Contains(strings.Join(r.hidden, "\n"), password) {
		t.Errorf("the password must be hidden and never logged: log %q, hidden %d values", r.log.String(), len(r.hidden))
	}

	s, err := env.Kube.CoreV1().Secrets(ccmdeploy.Namespace).Get(ctx, ccmdeploy.ConfigSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if conf := string(s.Data[ccmdeploy.ConfigFile]); !strings.Contains(conf, `password = "`+password+`"`) || string(s.Data[ccmdeploy.CAFile]) != creds["OS_CACERT"] {
		t.Errorf("the Secret does not carry the credentials and CA: keys %d", len(s.Data))
	}
	ds, err := dss.Get(ctx, ccmdeploy.DaemonSet, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := ds.Spec.Template.Spec.Containers[0].Image; img != "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1" {
		t.Errorf("image %s", img)
	}

	// RBAC: what the controllers need, and no more.
	sa := "system:serviceaccount:kube-system:" + ccmdeploy.DaemonSet
	for _, tt := range []struct {
		attr authorizationv1.ResourceAttributes
		want bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "nodes"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes"}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "nodes", Subresource: "status"}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "services", Subresource: "status"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "cloud-controller-manager"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "kube-scheduler"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "kube-system", Name: ccmdeploy.ConfigSecret}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "kube-system"}, false},
	} {
		attr := tt.attr
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}, ResourceAttributes: &attr}}
		got, err := env.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tt.want {
			t.Errorf("%s %s/%s %s: allowed %v, want %v", attr.Verb, attr.Resource, attr.Subresource, attr.Name, got.Status.Allowed, tt.want)
		}
	}

	// Applied again, as a second apply with a changed hash would: nothing changes.
	before := versions(ctx, t, kc, objs)
	if err := kc.Apply(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if after := versions(ctx, t, kc, objs); after != before {
		t.Errorf("applying the same objects again changed them:\nbefore %s\nafter  %s", before, after)
	}
}

// versions lists the resourceVersion of every object.
func versions(ctx context.Context, t *testing.T, kc *kube.Client, objs []*unstructured.Unstructured) string {
	t.Helper()
	var out []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := kc.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kc.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		out = append(out, o.GetKind()+"/"+o.GetName()+"="+got.GetResourceVersion())
	}
	return strings.Join(out, " ")
}
