package scenarios

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// HealthLimits checks the two brakes on health-based replacement: with max-unhealthy 1, a second
// NotReady Node is not replaced while the first one's replacement is in flight
// (short-circuit); and while the cloud is unreachable, an unhealthy Machine is not replaced until
// the cloud answers again.
func HealthLimits(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, func(o *controller.Options) {
		o.UnhealthyTimeout = 2 * time.Second
		o.MaxUnhealthy = intstr.FromInt32(1)
	})
	md := f.deployment("health", 3, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	ms := f.waitRunning(3)

	// Replacements stay in flight while their servers cannot be deleted, so that the second
	// unhealthy machine meets the first one's replacement still counting against the cap.
	for i := range 2 {
		if err := f.cloud.SetDeleteStuck(&ms[i], true); err != nil {
			t.Fatal(err)
		}
	}
	f.kubelet.SetReady(t, ms[0].Status.NodeRef.Name, false)
	f.kubelet.SetReady(t, ms[1].Status.NodeRef.Name, false)
	f.expectEvent(md, "ReplacementShortCircuited")
	f.consistently(1500*time.Millisecond, "at most max-unhealthy replacements in flight", func() (bool, string) {
		n := 0
		for _, m := range f.machines() {
			if !m.DeletionTimestamp.IsZero() && (m.UID == ms[0].UID || m.UID == ms[1].UID) {
				n++
			}
		}
		return n <= 1, fmt.Sprintf("%d of the two unhealthy machines being deleted", n)
	})
	for i := range 2 {
		if err := f.cloud.SetDeleteStuck(&ms[i], false); err != nil {
			t.Fatal(err)
		}
	}
	// If both turned unhealthy in the same instant, none was replaced (2 > 1): the second Node
	// recovering lifts the short-circuit. If the second was already being replaced, that
	// replacement finishes and the first follows.
	if env.Get(t, &ms[1]) && ms[1].DeletionTimestamp.IsZero() {
		f.kubelet.SetReady(t, ms[1].Status.NodeRef.Name, true)
	}
	f.waitReplaced(ms[0], 3)

	ms = f.waitRunning(3)
	f.cloud.SetUnreachable(true)
	f.kubelet.SetReady(t, ms[2].Status.NodeRef.Name, false)
	envtest.Eventually(t, wait, "machine unhealthy while the cloud is down", func() (bool, string) {
		env.Get(t, &ms[2])
		c := findCond(ms[2].Status.Conditions, v1alpha1.MachineHealthy)
		return c != nil && c.Status == "False", fmt.Sprintf("healthy=%v", c)
	})
	f.expectEvent(md, "ReplacementFrozen")
	f.consistently(1500*time.Millisecond, "no replacement while the cloud is unreachable", func() (bool, string) {
		env.Get(t, &ms[2])
		return ms[2].DeletionTimestamp.IsZero(), "the machine is being deleted"
	})
	f.cloud.SetUnreachable(false)
	f.waitReplaced(ms[2], 3)
}
