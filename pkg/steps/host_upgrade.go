package steps

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/drain"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

const (
	upgradeConfig = kubeadmDir + "/upgrade.yaml"
	drainTimeout  = 10 * time.Minute
)

// UpgradePreflight checks that the cluster can be upgraded now: every node Ready, and on
// cgroup v1 hosts the kubelet-config ConfigMap already tells new kubelets not to refuse them
// (kubeadm copies it to every node during the upgrade).
func (e *Env) UpgradePreflight(ctx context.Context, _ string) error {
	c, err := e.Kube(ctx)
	if err != nil {
		return err
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var notReady []string
	for i := range nodes.Items {
		if !NodeReady(&nodes.Items[i]) {
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
	patched, changed, err := kubeadm.PatchKubeletConfig([]byte(cm.Data["kubelet"]), e.Cluster, e.kubeletParams())
	if err != nil {
		return err
	}
	if changed {
		cm.Data["kubelet"] = string(patched)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating kubelet-config: %w", err)
		}
		e.logf("", "updated the kubelet-config ConfigMap for the new version")
	}
	return nil
}

// UpgradeLeader upgrades the cluster-wide components from the leader.
func (e *Env) UpgradeLeader(ctx context.Context, host string) error {
	return e.upgrade(ctx, host, true)
}

// UpgradeNode upgrades one more node: drain, kubeadm upgrade node, kubelet, uncordon.
func (e *Env) UpgradeNode(ctx context.Context, host string) error {
	return e.upgrade(ctx, host, false)
}

func (e *Env) upgrade(ctx context.Context, host string, leader bool) error {
	n, c, err := e.nodeAndKube(ctx, host)
	if err != nil {
		return err
	}
	h := e.Hosts[host]
	// Each phase's time goes to the progress output: an upgrade step takes minutes, and the
	// operator (and the benchmark) should see where they go.
	mark := time.Now()
	phase := func(what string) {
		e.logf(host, "%s (%s)", what, time.Since(mark).Round(100*time.Millisecond))
		mark = time.Now()
	}
	if err := e.cordonAndDrain(ctx, c, n.Name); err != nil {
		return err
	}
	phase("cordoned and drained")
	if err := e.installBinaries(ctx, host); err != nil {
		return err
	}
	np, err := e.nodeParams(n)
	if err != nil {
		return err
	}
	cfg, err := kubeadm.UpgradeConfig(e.Cluster, np)
	if err != nil {
		return err
	}
	if err := e.writeKubeadmFiles(ctx, n, upgradeConfig, cfg); err != nil {
		return err
	}
	args := []string{"upgrade", "node", "--config", upgradeConfig}
	if leader {
		args = []string{"upgrade", "apply", "--config", upgradeConfig, "--yes"}
	}
	if err := h.Command(ctx, "kubeadm", args...).Run(); err != nil {
		return err
	}
	phase("kubeadm " + args[0] + " " + args[1] + " done")
	if err := h.Command(ctx, "systemctl", "restart", "kubelet").Run(); err != nil {
		return err
	}
	if err := e.waitKubelet(ctx, c, n.Name); err != nil {
		return err
	}
	phase("kubelet restarted, node Ready")
	if n.Role == plan.ControlPlane {
		// The new kubelet may restart the static pods after the Node turns Ready: the next step
		// needs this control plane's API server back, and a one-control-plane cluster its only one.
		if err := waitStaticPodReady(ctx, c, "kube-apiserver-"+n.Name); err != nil {
			return err
		}
		if _, err := e.WaitAPI(ctx, apiTimeout); err != nil {
			return err
		}
		phase("kube-apiserver Ready, API answers")
		// The API answering is not enough for the next node's drain: without an active
		// controller manager, evicted pods are not replaced and stay in the Service's endpoints
		// after they stop, and without a scheduler replacements stay Pending. With one control
		// plane both restart with the upgrade and take over only when the old leader's lease
		// expires, seconds after their pods turn Ready.
		for _, component := range leaderElected {
			if err := waitStaticPodReady(ctx, c, component+"-"+n.Name); err != nil {
				return err
			}
		}
		phase("controller manager and scheduler Ready")
		if err := waitLeaders(ctx, c, leaderElected...); err != nil {
			return err
		}
		phase("their leaders at work")
	}
	return uncordon(ctx, c, n.Name)
}

// leaderElected are the control-plane components that work only while one of their instances
// holds the leader-election Lease of the same name in kube-system.
var leaderElected = []string{"kube-controller-manager", "kube-scheduler"}

// waitLeaders waits until each named leader-election Lease in kube-system is renewed while it
// watches: proof that a leader is at work now, whichever control plane it runs on. Comparing
// renew times with each other, not with this machine's clock, keeps clock skew out of it.
func waitLeaders(ctx context.Context, c *kube.Client, names ...string) error {
	first := map[string]string{}
	return kube.Wait(ctx, "an active "+strings.Join(names, " and an active ")+" leader", apiTimeout, func(ctx context.Context) (bool, string, error) {
		var waiting []string
		for _, name := range names {
			l, err := c.Kube.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				waiting = append(waiting, fmt.Sprintf("lease %s: %v", name, err))
				continue
			}
			holder, renewed := "", ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			if l.Spec.RenewTime != nil {
				renewed = l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
			}
			if was, seen := first[name]; !seen {
				first[name] = holder + "@" + renewed
			} else if holder != "" && renewed != "" && was != holder+"@"+renewed {
				continue
			}
			waiting = append(waiting, fmt.Sprintf("lease %s held by %q, last renewed %s", name, holder, orDash(renewed)))
		}
		return len(waiting) == 0, strings.Join(waiting, "; "), nil
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// waitStaticPodReady waits until the mirror pod of a static pod reports Ready.
func waitStaticPodReady(ctx context.Context, c *kube.Client, name string) error {
	return kube.Wait(ctx, fmt.Sprintf("static pod kube-system/%s to be Ready", name), apiTimeout, func(ctx context.Context) (bool, string, error) {
		p, err := c.Kube.CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				return cond.Status == corev1.ConditionTrue, fmt.Sprintf("phase %s, ready %s", p.Status.Phase, cond.Status), nil
			}
		}
		return false, fmt.Sprintf("phase %s", p.Status.Phase), nil
	})
}

// waitKubelet waits until the node reports the wanted kubelet version and is Ready.
func (e *Env) waitKubelet(ctx context.Context, c *kube.Client, name string) error {
	want := "v" + strings.TrimPrefix(e.Cluster.Versions.Kubernetes, "v")
	return kube.Wait(ctx, fmt.Sprintf("node %s to run kubelet %s and be Ready", name, want), 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		v := n.Status.NodeInfo.KubeletVersion
		return v == want && NodeReady(n), fmt.Sprintf("kubelet %s, ready %t", v, NodeReady(n)), nil
	})
}

// cordonAndDrain evicts the node's pods through the Eviction API, which honours
// PodDisruptionBudgets: a blocked eviction is retried until the drain timeout.
func (e *Env) cordonAndDrain(ctx context.Context, c *kube.Client, name string) error {
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := drainer(ctx, c)
	if err := drain.RunCordonOrUncordon(d, node, true); err != nil {
		return fmt.Errorf("cordoning %s: %w", name, err)
	}
	if err := drain.RunNodeDrain(d, name); err != nil {
		return fmt.Errorf("draining %s: %w", name, err)
	}
	return nil
}

func uncordon(ctx context.Context, c *kube.Client, name string) error {
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return drain.RunCordonOrUncordon(drainer(ctx, c), node, false)
}

func drainer(ctx context.Context, c *kube.Client) *drain.Helper {
	return &drain.Helper{
		Ctx:                 ctx,
		Client:              c.Kube,
		Force:               false,
		GracePeriodSeconds:  -1,
		IgnoreAllDaemonSets: true,
		DeleteEmptyDirData:  true,
		Timeout:             drainTimeout,
		Out:                 io.Discard,
		ErrOut:              io.Discard,
	}
}
