package probe

import (
	"context"
	"os"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestMetadataDrift reads real Nodes from a kube-apiserver: a Node that lacks a label or taint
// of its host drifts, one with everything (and more) does not, and a host without a Node is
// not reported (it has not joined).
func TestMetadataDrift(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := &v1beta1.Cluster{StaticWorkers: v1beta1.StaticWorkers{Hosts: []v1beta1.Host{
		{PublicAddress: "10.0.0.1", Hostname: "drift-labels", Labels: map[string]string{"zone": "b"}},
		{PublicAddress: "10.0.0.2", Hostname: "drift-taint", Taints: []v1beta1.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}}},
		{PublicAddress: "10.0.0.3", Hostname: "in-sync", Labels: map[string]string{"zone": "a"}},
		{PublicAddress: "10.0.0.4", Hostname: "not-joined", Labels: map[string]string{"zone": "a"}},
	}}}
	for name, labels := range map[string]map[string]string{
		"drift-labels": {"zone": "a"}, "drift-taint": nil, "in-sync": {"zone": "a", "kubernetes.io/os": "linux"},
	} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if _, err := kc.Kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kc.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	got, err := metadataDrift(ctx, kc, inventory.Nodes(c))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"drift-labels", "drift-taint"}; !reflect.DeepEqual(got, want) {
		t.Errorf("drift %v, want %v", got, want)
	}
}
