package phases

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The upgrade phases move one node to the manifest's version: cordon and drain it (through the
// Eviction API, so PodDisruptionBudgets hold), install the new binaries, run kubeadm upgrade
// (apply on the leader, which upgrades the cluster-wide components, node everywhere else),
// restart the kubelet, wait for the Node to be Ready at the new version, and uncordon it. On a
// control plane it also waits for its API server, controller manager and scheduler, and for
// their leaders to be at work, before the next node is drained. Each stage's time goes to the
// progress output.
var (
	_ = register(Phase{
		Name:  plan.StepUpgradeLeader,
		Short: "upgrade the cluster-wide components and the leader with kubeadm upgrade apply",
		Run:   func(ctx context.Context, r *Run, host string) error { return upgrade(ctx, r, host, true) },
	})
	_ = register(Phase{
		Name:  plan.StepUpgradeNode,
		Short: "upgrade one more node with kubeadm upgrade node, drained first",
		Run:   func(ctx context.Context, r *Run, host string) error { return upgrade(ctx, r, host, false) },
	})
)

// upgradeRun is what upgrading a node reads of a run.
type upgradeRun interface {
	nodes
	api
	logger
	manifest
	NodeParams(n Node) (kubeadm.NodeParams, error)
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}

func upgrade(ctx context.Context, r upgradeRun, host string, leader bool) error {
	n, c, err := nodeAndKube(ctx, r, host)
	if err != nil {
		return err
	}
	h := n.SSH
	// Each stage's time goes to the progress output: an upgrade step takes minutes, and the
	// operator (and the benchmark) should see where they go.
	stage := stages(r, host)
	if err := cordonAndDrain(ctx, c, n.Name); err != nil {
		return err
	}
	stage("cordoned and drained")
	if err := installBinaries(ctx, r.Manifest(), n); err != nil {
		return err
	}
	np, err := r.NodeParams(n)
	if err != nil {
		return err
	}
	cfg, err := kubeadm.UpgradeConfig(r.Manifest(), np)
	if err != nil {
		return err
	}
	args := []string{"upgrade", "node"}
	if leader {
		args = []string{"upgrade", "apply", "--yes"}
	}
	if err := kubeadmWithConfig(ctx, n, upgradeConfig, cfg, args); err != nil {
		return err
	}
	stage("kubeadm " + args[0] + " " + args[1] + " done")
	if err := h.Command(ctx, "systemctl", "restart", "kubelet").Run(); err != nil {
		return err
	}
	if err := waitKubelet(ctx, c, n.Name, r.Manifest().Versions.Kubernetes); err != nil {
		return err
	}
	stage("kubelet restarted, node Ready")
	if n.Role == plan.ControlPlane {
		if err := waitControlPlane(ctx, r, c, n.Name, stage); err != nil {
			return err
		}
	}
	return uncordon(ctx, c, n.Name)
}

// waitKubelet waits until the node reports the wanted kubelet version and is Ready.
func waitKubelet(ctx context.Context, c *kube.Client, name, version string) error {
	want := "v" + strings.TrimPrefix(version, "v")
	return kube.Wait(ctx, fmt.Sprintf("node %s to run kubelet %s and be Ready", name, want), 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		v := n.Status.NodeInfo.KubeletVersion
		return v == want && kube.NodeReady(n), fmt.Sprintf("kubelet %s, ready %t", v, kube.NodeReady(n)), nil
	})
}

// waitControlPlane waits, after a control plane's kubelet restarted, until the node can be
// put back into service and the next node drained: its API server Ready and the API
// answering, its controller manager and scheduler Ready, and their leaders at work.
func waitControlPlane(ctx context.Context, r interface {
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}, c *kube.Client, node string, stage func(string)) error {
	// The new kubelet may restart the static pods after the Node turns Ready: the next step
	// needs this control plane's API server back, and a one-control-plane cluster its only one.
	if err := waitStaticPodReady(ctx, c, "kube-apiserver-"+node); err != nil {
		return err
	}
	if _, err := r.WaitAPI(ctx, apiTimeout); err != nil {
		return err
	}
	stage("kube-apiserver Ready, API answers")
	// The API answering is not enough for the next node's drain: without an active
	// controller manager, evicted pods are not replaced and stay in the Service's endpoints
	// after they stop, and without a scheduler replacements stay Pending. With one control
	// plane both restart with the upgrade and take over only when the old leader's lease
	// expires, seconds after their pods turn Ready.
	for _, component := range leaderElected {
		if err := waitStaticPodReady(ctx, c, component+"-"+node); err != nil {
			return err
		}
	}
	stage("controller manager and scheduler Ready")
	if err := waitLeaders(ctx, c, leaderElected...); err != nil {
		return err
	}
	stage("their leaders at work")
	return nil
}
