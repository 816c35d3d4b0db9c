package phases

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The containerd phase moves one joined node to the containerd its Kubernetes version needs
// (containerd 2 from v1.36 on), one node at a time and before the upgrade: the node is cordoned
// and drained, the kubelet stopped and every pod sandbox on it removed (containerd 2 does not
// adopt containerd 1's running sandboxes cleanly: the kubelet would recreate them at some later
// moment, and a control plane's API server with them), the prerequisites script installs and
// configures the new containerd, and the kubelet starts again. Images stay in containerd's
// store. The node is uncordoned once it is Ready on the new runtime, its DaemonSet pods
// (kube-proxy, the CNI's agent) run again in new containers with kube-proxy's rules synced, and,
// on a control plane, its static pods run again in new containers, the API answers and the
// controller manager and scheduler leaders are at work.
var _ = register(Phase{
	Name:  plan.StepContainerd,
	Short: "move a joined node to the containerd its Kubernetes version needs, drained first",
	Run:   func(ctx context.Context, r *Run, host string) error { return moveContainerd(ctx, r, host) },
})

// staticComponents are the control plane's static pods, as kubeadm names them.
var staticComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// stopPods stops the kubelet, then removes every pod sandbox (and so every container) of the
// CRI namespace, through crictl where the host has it and ctr otherwise.
const stopPods = `set -euo pipefail
systemctl stop kubelet
if command -v crictl >/dev/null; then
  # crictl's own deadline (2 s) is shorter than stopping a node's pods takes, network teardown
  # included: give each call two minutes, and try again while sandboxes are left.
  cri() { crictl --runtime-endpoint unix:///run/containerd/containerd.sock --timeout 2m "$@"; }
  for _ in 1 2 3; do
    [ -n "$(cri pods -q 2>/dev/null)" ] || break
    cri rmp --all --force >/dev/null 2>&1 || true
  done
  left=$(cri pods -q 2>/dev/null | tr '\n' ' ') || { echo "crictl cannot list the pod sandboxes" >&2; exit 1; }
  [ -z "$left" ] || { echo "pod sandboxes left after three attempts to remove them: $left" >&2; exit 1; }
else
  for t in $(ctr -n k8s.io tasks ls -q); do ctr -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
  for i in $(seq 60); do [ -z "$(ctr -n k8s.io tasks ls -q)" ] && break; sleep 1; done
  [ -z "$(ctr -n k8s.io tasks ls -q)" ] || { echo "containers still running after 60 s: $(ctr -n k8s.io tasks ls -q | tr '\n' ' ')" >&2; exit 1; }
fi
`

// containerdRun is what moving a node's containerd reads of a run.
type containerdRun interface {
	prerequisitesRun
	api
	logger
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}

func moveContainerd(ctx context.Context, r containerdRun, host string) error {
	n, c, err := nodeAndKube(ctx, r, host)
	if err != nil {
		return err
	}
	stage := stages(r, host)
	controlPlane := n.Role == plan.ControlPlane
	var before map[string][]string
	if controlPlane {
		if before, err = staticContainers(ctx, c, n.Name); err != nil {
			return err
		}
	}
	if err := cordonAndDrain(ctx, c, n.Name); err != nil {
		return err
	}
	stage("cordoned and drained")
	daemons, err := nodeDaemonPods(ctx, c, n.Name)
	if err != nil {
		return err
	}
	if err := n.SSH.Script(ctx, "stop-pods", stopPods).Run(); err != nil {
		return err
	}
	stage("kubelet stopped, pods removed")
	if err := runPrerequisites(ctx, r, n, "SLIPWAY_NODE_DRAINED=1"); err != nil {
		return err
	}
	stage("containerd installed and configured")
	if err := n.SSH.Command(ctx, "systemctl", "restart", "kubelet").Run(); err != nil {
		return err
	}
	if err := waitNodeRuntime(ctx, c, n.Name, "containerd://2."); err != nil {
		return err
	}
	stage("kubelet restarted, node Ready on containerd 2")
	if controlPlane {
		if err := waitStaticRestarted(ctx, c, n.Name, before); err != nil {
			return err
		}
		if err := waitControlPlane(ctx, r, c, n.Name, stage); err != nil {
			return err
		}
	}
	// Uncordoned, the node is back in load balancers' rotation: its kube-proxy and CNI agent must
	// run again first, and kube-proxy must have written its rules, or traffic sent to the node
	// meets rules and routes from before the move.
	if err := waitDaemonPodsRestarted(ctx, c, n.Name, daemons); err != nil {
		return err
	}
	if daemons.hasKubeProxy() {
		if err := waitKubeProxySynced(ctx, n.SSH, n.Name); err != nil {
			return err
		}
	}
	stage("kube-proxy and the CNI running again")
	return uncordon(ctx, c, n.Name)
}

// stages returns a function that logs a stage of a long step with the time since the last one.
func stages(r logger, host string) func(string) {
	mark := time.Now()
	return func(what string) {
		r.Logf(host, "%s (%s)", what, time.Since(mark).Round(100*time.Millisecond))
		mark = time.Now()
	}
}

// staticContainers returns the container IDs of the node's static control-plane pods, by pod.
func staticContainers(ctx context.Context, c *kube.Client, node string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, comp := range staticComponents {
		p, err := c.Kube.CoreV1().Pods("kube-system").Get(ctx, comp+"-"+node, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading static pod kube-system/%s-%s: %w", comp, node, err)
		}
		out[p.Name] = containerIDs(p)
	}
	return out, nil
}

func containerIDs(p *corev1.Pod) []string {
	var ids []string
	for _, s := range p.Status.ContainerStatuses {
		if s.ContainerID != "" {
			ids = append(ids, s.ContainerID)
		}
	}
	return ids
}

// waitStaticRestarted waits until every static pod of the node is Ready in containers other
// than those it ran in before: a mirror pod that is Ready on the old containers' status says
// nothing about the new runtime. The API may be down meanwhile (the node may be the only
// control plane): errors count as not yet.
func waitStaticRestarted(ctx context.Context, c *kube.Client, node string, before map[string][]string) error {
	return kube.Wait(ctx, fmt.Sprintf("the static pods of %s to run again in new containers", node), apiTimeout, func(ctx context.Context) (bool, string, error) {
		var waiting []string
		for name, old := range before {
			p, err := c.Kube.CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			ids := containerIDs(p)
			fresh := len(ids) > 0
			for _, id := range ids {
				fresh = fresh && !slices.Contains(old, id)
			}
			if !fresh || !kube.PodReady(p) {
				waiting = append(waiting, name)
			}
		}
		slices.Sort(waiting)
		return len(waiting) == 0, "waiting for " + strings.Join(waiting, ", "), nil
	})
}

// waitNodeRuntime waits until the Node is Ready and reports a container runtime whose version
// starts with prefix (such as "containerd://2."). API errors count as not yet.
func waitNodeRuntime(ctx context.Context, c *kube.Client, name, prefix string) error {
	return kube.Wait(ctx, fmt.Sprintf("node %s to be Ready on %s", name, prefix), 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		// containerd reports its version as built: "containerd://2.2.9" or "containerd://v2.2.9".
		rt := strings.Replace(n.Status.NodeInfo.ContainerRuntimeVersion, "://v", "://", 1)
		return strings.HasPrefix(rt, prefix) && kube.NodeReady(n), fmt.Sprintf("runtime %s, ready %t", rt, kube.NodeReady(n)), nil
	})
}
