package phases

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// daemonPods are the pods that DaemonSets run on a node (kube-proxy, the CNI's agent), by the
// DaemonSet's UID, with their containers' IDs.
type daemonPods map[string]daemonPod

type daemonPod struct {
	DaemonSet  string // namespace/name, for messages
	Containers []string
	Ready      bool
}

// nodeDaemonPods lists the DaemonSet pods on a node.
func nodeDaemonPods(ctx context.Context, c *kube.Client, node string) (daemonPods, error) {
	pods, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, fmt.Errorf("listing the pods on %s: %w", node, err)
	}
	out := daemonPods{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if owner := metav1.GetControllerOf(p); owner != nil && owner.Kind == "DaemonSet" && p.DeletionTimestamp == nil {
			out[string(owner.UID)] = daemonPod{DaemonSet: p.Namespace + "/" + owner.Name, Containers: containerIDs(p), Ready: kube.PodReady(p)}
		}
	}
	return out, nil
}

// waitDaemonPodsRestarted waits until every DaemonSet that had a Ready pod on the node has one
// there again, Ready, in containers other than those before: after its runtime was replaced, a
// node carries traffic only once its kube-proxy and CNI agent run again. A pod whose Ready status
// is left from its old containers says nothing. A pod that was not Ready before is not waited
// for: the move is not what keeps it from being Ready.
func waitDaemonPodsRestarted(ctx context.Context, c *kube.Client, node string, before daemonPods) error {
	return kube.Wait(ctx, fmt.Sprintf("the DaemonSet pods of %s to run again in new containers", node), 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		now, err := nodeDaemonPods(ctx, c, node)
		if err != nil {
			return false, err.Error(), nil
		}
		pods, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := map[string]bool{}
		for i := range pods.Items {
			if owner := metav1.GetControllerOf(&pods.Items[i]); owner != nil && kube.PodReady(&pods.Items[i]) {
				ready[string(owner.UID)] = true
			}
		}
		var waiting []string
		for uid, old := range before {
			if !old.Ready {
				continue
			}
			cur, ok := now[uid]
			fresh := ok && len(cur.Containers) > 0
			for _, id := range cur.Containers {
				fresh = fresh && !slices.Contains(old.Containers, id)
			}
			if !fresh || !ready[uid] {
				waiting = append(waiting, old.DaemonSet)
			}
		}
		slices.Sort(waiting)
		return len(waiting) == 0, "waiting for " + strings.Join(waiting, ", "), nil
	})
}

// hasKubeProxy reports whether kube-proxy runs among the pods (not with Cilium's kube-proxy
// replacement, for one).
func (d daemonPods) hasKubeProxy() bool {
	for _, p := range d {
		if p.DaemonSet == "kube-system/kube-proxy" {
			return true
		}
	}
	return false
}

// kubeProxySynced is how a host tells whether its kube-proxy has written its rules since it
// started: the time of the last successful sync in its metrics (on 127.0.0.1:10249, kubeadm's
// default), which a new process reports only after its first sync. Its /healthz cannot tell:
// it answers 200 from the start.
const kubeProxySynced = `curl -sf --max-time 2 http://127.0.0.1:10249/metrics | awk '$1 ~ /^kubeproxy_sync_proxy_rules_last_timestamp_seconds([{]|$)/ {print $2; exit}'`

// waitKubeProxySynced waits until the kube-proxy on the host has synced its rules since start.
func waitKubeProxySynced(ctx context.Context, h ssh.Host, node string) error {
	return kube.Wait(ctx, fmt.Sprintf("kube-proxy on %s to sync its rules", node), 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		out, err := h.Script(ctx, "kube-proxy-synced", kubeProxySynced).Output()
		if err != nil {
			return false, err.Error(), nil
		}
		ts, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil || ts <= 0 {
			return false, "no sync reported yet", nil
		}
		return true, "", nil
	})
}
