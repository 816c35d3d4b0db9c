package phases

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The upgrade-preflight phase checks, before any host changes, that the cluster can be
// upgraded now: every node Ready (each node is drained in turn, and the others must take its
// pods), and on cgroup v1 hosts the kubelet-config ConfigMap already telling new kubelets not
// to refuse them (kubeadm copies it to every node during the upgrade). It also brings the
// kubeadm-config ConfigMap's ClusterConfiguration up to what slipway renders for the API
// servers (see patchClusterConfig), which kubeadm upgrade then writes on each control plane.
var _ = register(Phase{
	Name:  plan.StepUpgradePreflight,
	Short: "check that every node is Ready and prepare kubelet-config and kubeadm-config for the new version",
	Run:   func(ctx context.Context, r *Run, _ string) error { return upgradePreflight(ctx, r) },
})

// upgradePreflightRun is what the upgrade's preflight reads of a run.
type upgradePreflightRun interface {
	api
	logger
	manifest
	KubeletParams() kubeadm.KubeletParams
}

func upgradePreflight(ctx context.Context, r upgradePreflightRun) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var notReady []string
	for i := range nodes.Items {
		if !kube.NodeReady(&nodes.Items[i]) {
			notReady = append(notReady, nodes.Items[i].Name)
		}
	}
	if len(notReady) > 0 {
		return fmt.Errorf("nodes %s are not Ready: an upgrade drains nodes one by one and needs the others to take their pods; fix them first", strings.Join(notReady, ", "))
	}
	cms := c.Kube.CoreV1().ConfigMaps("kube-system")
	cm, err := cms.Get(ctx, "kubelet-config", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading kubelet-config: %w", err)
	}
	patched, changed, err := kubeadm.PatchKubeletConfig([]byte(cm.Data["kubelet"]), r.Manifest(), r.KubeletParams())
	if err != nil {
		return err
	}
	if changed {
		cm.Data["kubelet"] = string(patched)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating kubelet-config: %w", err)
		}
		r.Logf("", "updated the kubelet-config ConfigMap for the new version")
	}
	return patchClusterConfig(ctx, r, c)
}

// patchClusterConfig gives the kubeadm-config ConfigMap's ClusterConfiguration what slipway
// renders into it today that a cluster installed by an older slipway (or adopted from another
// tool) lacks and kubeadm upgrade should carry to each control plane: the API servers'
// --etcd-servers listing every member (kubeadm.PatchClusterConfig).
func patchClusterConfig(ctx context.Context, r upgradePreflightRun, c *kube.Client) error {
	cms := c.Kube.CoreV1().ConfigMaps("kube-system")
	cm, err := cms.Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading kubeadm-config: %w", err)
	}
	patched, changed, err := kubeadm.PatchClusterConfig([]byte(cm.Data["ClusterConfiguration"]), r.Manifest())
	if err != nil {
		return fmt.Errorf("kubeadm-config: %w", err)
	}
	if !changed {
		return nil
	}
	cm.Data["ClusterConfiguration"] = string(patched)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating kubeadm-config: %w", err)
	}
	r.Logf("", "updated the kubeadm-config ConfigMap: each API server will reach every etcd member once upgraded")
	return nil
}
