package mcdeploy

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestRenderedObjectsApply creates every rendered object on a real kube-apiserver, which
// validates them as a cluster would (a unit test only sees that they decode), and reads the
// Deployment back: its GOMEMLIMIT comes from the container's memory limit.
func TestRenderedObjectsApply(t *testing.T) {
	cfg, _ := envtest.StartOwn(t, nil)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &v1beta1.Cluster{Name: "prod", MachineController: v1beta1.MachineController{Image: "registry.example.com/mc:v1"},
		CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}}
	objs, err := Render(cluster, []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The API server makes kube-system shortly after it starts answering.
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Name: "kube-system"}, &corev1.Namespace{}) == nil, nil
	}); err != nil {
		t.Fatalf("no kube-system namespace: %v", err)
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Errorf("creating %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	var d appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: Deployment}, &d); err != nil {
		t.Fatal(err)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	var found bool
	for _, e := range ctr.Env {
		if e.Name != "GOMEMLIMIT" {
			continue
		}
		found = true
		if e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil || e.ValueFrom.ResourceFieldRef.Resource != "limits.memory" {
			t.Errorf("GOMEMLIMIT is %+v, want the container's limits.memory", e)
		}
	}
	limit := ctr.Resources.Limits[corev1.ResourceMemory]
	if !found || limit.Cmp(resource.MustParse("64Mi")) < 0 {
		t.Errorf("GOMEMLIMIT set: %v; memory limit %s", found, limit.String())
	}
}
