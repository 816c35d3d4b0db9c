package phases

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/test/envtest"
)

// preflightRun is what patchClusterConfig reads of a run: the manifest and the log.
type preflightRun struct {
	c   *v1beta1.Cluster
	kc  *kube.Client
	log bytes.Buffer
}

func (r *preflightRun) Manifest() *v1beta1.Cluster                 { return r.c }
func (r *preflightRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *preflightRun) KubeletParams() kubeadm.KubeletParams       { return kubeadm.KubeletParams{} }
func (r *preflightRun) Logf(host, format string, args ...any) {
	fmt.Fprintf(&r.log, host+": "+format+"\n", args...)
}

// TestPatchClusterConfigInCluster: before an upgrade of an HA cluster whose kubeadm-config
// points the API servers at their local etcd member only (what kubeadm does by default, and what
// clusters installed by an older slipway have), the ConfigMap gets the list of every member and
// keeps the rest; a second run changes nothing.
func TestPatchClusterConfigInCluster(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := &v1beta1.Cluster{Name: "unit", ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{
		{PublicAddress: "192.0.2.11", PrivateAddress: "10.0.0.11"},
		{PublicAddress: "192.0.2.12", PrivateAddress: "10.0.0.12"},
		{PublicAddress: "192.0.2.13", PrivateAddress: "fd00::13"},
	}}}
	stored := "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: unit\nkubernetesVersion: v1.36.3\n" +
		"apiServer:\n  extraArgs:\n  - name: service-node-port-range\n    value: 30000-32767\n"
	cms := kc.Kube.CoreV1().ConfigMaps("kube-system")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config"},
		Data: map[string]string{"ClusterConfiguration": stored}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "kubeadm-config", metav1.DeleteOptions{}) })

	r := &preflightRun{c: c, kc: kc}
	if err := patchClusterConfig(ctx, r, kc); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := cm.Data["ClusterConfiguration"]
	want := "value: https://10.0.0.11:2379,https://10.0.0.12:2379,https://[fd00::13]:2379"
	if !strings.Contains(got, want) || !strings.Contains(got, "kubernetesVersion: v1.36.3") || !strings.Contains(got, "service-node-port-range") {
		t.Fatalf("kubeadm-config after the patch:\n%s\nwant every member (%s) and every earlier field", got, want)
	}
	if !strings.Contains(r.log.String(), "updated the kubeadm-config ConfigMap") {
		t.Errorf("log = %q, want it to say the ConfigMap changed", r.log.String())
	}

	r.log.Reset()
	if err := patchClusterConfig(ctx, r, kc); err != nil {
		t.Fatal(err)
	}
	again, err := cms.Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != cm.ResourceVersion || r.log.Len() != 0 {
		t.Errorf("a second run changed kubeadm-config (resourceVersion %s → %s) or logged %q", cm.ResourceVersion, again.ResourceVersion, r.log.String())
	}
}
