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

// TestRunningCNIs reads real Pods from a kube-apiserver: canal's per-node pods, as KubeOne's
// canal labels them, make canal a running CNI; a pod of another app in the namespace, or one
// named like flannel's in the wrong namespace, does not count.
func TestRunningCNIs(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := runningCNIs(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("running CNIs %v on a cluster with no pods, want none", got)
	}
	for _, p := range []struct{ ns, name, app string }{
		{"kube-system", "canal-x7k2p", "canal"},          // canal's label is k8s-app=canal
		{"kube-system", "coredns-1", "kube-dns"},         // not a CNI
		{"default", "kube-flannel-ds-abc", "flannel"},    // flannel's pods live in kube-flannel
		{"default", "cilium-lookalike", "cilium-canary"}, // another app
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns, Labels: map[string]string{"k8s-app": p.app, "app": p.app}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := kc.Kube.CoreV1().Pods(p.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kc.Kube.CoreV1().Pods(p.ns).Delete(context.Background(), p.name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		})
	}
	if got, err = runningCNIs(ctx, kc); err != nil {
		t.Fatal(err)
	}
	if want := []string{"canal"}; !reflect.DeepEqual(got, want) {
		t.Errorf("running CNIs %v, want %v", got, want)
	}
}

// TestKubeletServingUnsigned reads kubeadm's kubelet-config ConfigMap from a real
// kube-apiserver: absent (not a kubeadm cluster), serverTLSBootstrap off as raw kubeadm leaves
// it, then on as slipway sets it.
func TestKubeletServingUnsigned(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cms := kc.Kube.CoreV1().ConfigMaps("kube-system")
	check := func(want bool) {
		t.Helper()
		got, err := kubeletServingUnsigned(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("kubelet serving certificates unsigned: %t, want %t", got, want)
		}
	}
	check(false)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubelet-config", Namespace: "kube-system"},
		Data: map[string]string{"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n"}}
	cm, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "kubelet-config", metav1.DeleteOptions{}) })
	check(true)
	cm.Data["kubelet"] += "serverTLSBootstrap: true\n"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check(false)
}
