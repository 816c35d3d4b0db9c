package webhook_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// examplePath is the MachineDeployment operators write today: shared/ beside the repository
// when it is there, else the repository's own testdata (a bare clone in CI).
func examplePath(t *testing.T, env *envtest.Env) string {
	for _, p := range []string{
		filepath.Join(env.Root, "..", "shared", "examples", "machinedeployment-openstack.yaml"),
		filepath.Join("testdata", "machinedeployment-openstack.yaml"),
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("machinedeployment-openstack.yaml is in neither ../shared/examples nor testdata")
	return ""
}

func readExample(t *testing.T, env *envtest.Env) *unstructured.Unstructured {
	objs, err := envtest.ReadObjects(examplePath(t, env))
	if err != nil || len(objs) != 1 {
		t.Fatalf("reading the example: %d objects, %v", len(objs), err)
	}
	return objs[0]
}

// TestExampleManifest applies the operators' MachineDeployment exactly as written. The CRD
// schema accepts it unchanged; admission refuses only its kubelet 1.32.3, with a message that
// names the supported window: its region, availability zone, flavor, floating IP pool, image,
// network, security groups, server group and subnet are the Machine's to choose. With a
// supported kubelet and nothing else changed it is accepted.
func TestExampleManifest(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()

	t.Run("CRD schema accepts it unchanged", func(t *testing.T) {
		env.WithoutAdmission(t, func() {
			u := readExample(t, env)
			path := []string{"spec", "template", "spec", "providerSpec", "value", "cloudProviderSpec", "serverGroupID"}
			want, _, _ := unstructured.NestedString(u.Object, path...)
			if want == "" {
				t.Fatalf("the example has no serverGroupID to check pruning with")
			}
			if err := env.Client.Create(ctx, u, client.DryRunAll); err != nil {
				t.Fatalf("the CRD rejected the example: %v", err)
			}
			if got, _, _ := unstructured.NestedString(u.Object, path...); got != want {
				t.Errorf("providerSpec.value was pruned: serverGroupID = %q, want %q", got, want)
			}
		})
	})

	t.Run("admission names the supported window, and only that", func(t *testing.T) {
		u := readExample(t, env)
		if region, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "providerSpec", "value",
			"cloudProviderSpec", "region"); region == "" {
			t.Fatalf("the example names no region to check admission with")
		}
		err := env.Client.Create(ctx, u, client.DryRunAll)
		if !apierrors.IsInvalid(err) {
			t.Fatalf("create = %v, want an Invalid error about the kubelet version", err)
		}
		causes := err.(apierrors.APIStatus).Status().Details.Causes
		if len(causes) != 1 || causes[0].Field != "spec.template.spec.versions.kubelet" ||
			!strings.Contains(causes[0].Message, v1alpha1.SupportedKubernetesMinors) {
			t.Fatalf("causes = %+v, want one: the kubelet version, naming %s", causes, v1alpha1.SupportedKubernetesMinors)
		}
	})

	t.Run("accepted with a supported kubelet, and defaulted", func(t *testing.T) {
		u := readExample(t, env)
		if err := unstructured.SetNestedField(u.Object, "1.36.3", "spec", "template", "spec", "versions", "kubelet"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, u, client.DryRunAll); err != nil {
			t.Fatalf("create = %v", err)
		}
		surge, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "strategy", "rollingUpdate", "maxSurge")
		deadline, _, _ := unstructured.NestedInt64(u.Object, "spec", "progressDeadlineSeconds")
		if surge == nil || deadline != 600 {
			t.Errorf("defaults not applied: maxSurge=%v progressDeadlineSeconds=%d", surge, deadline)
		}
	})
}

// validMD returns a MachineDeployment that admission accepts.
func validMD(ns string) *v1alpha1.MachineDeployment {
	labels := map[string]string{"group": "a"}
	return &v1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "md", Namespace: ns},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: v1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: validSpec()},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// TestReplicasDefault: a MachineDeployment with the autoscaler's bounds and no replicas starts
// at the minimum size, one without them at 1; an update that carries no replicas (a server-side
// apply by a manager that gave the field up) keeps the count the object has.
func TestReplicasDefault(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	newMD := func(name string, annotations map[string]string) *unstructured.Unstructured {
		u := readExample(t, env)
		u.SetName(name)
		u.SetNamespace(ns)
		u.SetAnnotations(annotations)
		unstructured.RemoveNestedField(u.Object, "spec", "replicas")
		if err := unstructured.SetNestedField(u.Object, "1.36.3", "spec", "template", "spec", "versions", "kubelet"); err != nil {
			t.Fatal(err)
		}
		return u
	}
	replicas := func(u *unstructured.Unstructured) int64 {
		n, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			return -1
		}
		return n
	}
	bounded := newMD("bounded", map[string]string{v1alpha1.AutoscalerMinSizeAnnotation: "3", v1alpha1.AutoscalerMaxSizeAnnotation: "6"})
	if err := env.Client.Create(ctx, bounded); err != nil {
		t.Fatal(err)
	}
	plain := newMD("plain", nil)
	if err := env.Client.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if replicas(bounded) != 3 || replicas(plain) != 1 {
		t.Fatalf("created with replicas %d (bounds 3 to 6) and %d (no bounds), want 3 and 1", replicas(bounded), replicas(plain))
	}
	for _, u := range []*unstructured.Unstructured{bounded, plain} {
		if err := unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		unstructured.RemoveNestedField(u.Object, "spec", "replicas")
		if err := env.Client.Update(ctx, u); err != nil {
			t.Fatal(err)
		}
		if replicas(u) != 5 {
			t.Errorf("%s: an update without replicas left %d, want the 5 it had", u.GetName(), replicas(u))
		}
	}
}
