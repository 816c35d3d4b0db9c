package phases

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// What an upgraded control plane waits for before the next node is drained.

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
