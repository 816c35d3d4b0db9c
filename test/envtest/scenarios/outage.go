package scenarios

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// APIServerNotReady: the API server stops reporting ready (its /readyz fails, as when it lost
// its etcd) while every Node of a pool looks NotReady for longer than the unhealthy timeout.
// Health-based replacement freezes: the Machines are judged unhealthy, but none is deleted,
// and the MachineDeployment gets a ReplacementFrozen event. When the API server is ready again
// and the kubelets report again, nothing was deleted. As a control, one Node NotReady with the
// API server ready is replaced after the timeout. MaxUnhealthy is 100% here, so that only the
// freeze, not the short-circuit, keeps the Machines.
func APIServerNotReady(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	const unhealthy = 2 * time.Second
	f := setup(t, env, newCloud, func(o *controller.Options) {
		o.UnhealthyTimeout = unhealthy
		o.MaxUnhealthy = intstr.FromString("100%")
	})
	md := f.deployment("outage", 3, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	ms := f.waitRunning(3)
	uids := uidsOf(ms)

	f.mgr.SetFault(func(r *http.Request) bool { return r.URL.Path == "/readyz" })
	envtest.Eventually(t, wait, "three /readyz probes refused", func() (bool, string) {
		n := f.mgr.Refused()
		return n >= 3, fmt.Sprintf("%d refused", n)
	})
	for _, m := range ms {
		f.kubelet.SetReady(t, m.Status.NodeRef.Name, false)
	}
	f.waitHealthy(metav1.ConditionFalse, 3)
	f.expectEvent(md, "ReplacementFrozen")
	kept := func() (bool, string) {
		now := f.machines()
		for _, m := range now {
			if !m.DeletionTimestamp.IsZero() {
				return false, fmt.Sprintf("machine %s is being deleted: %s", m.Name, describe(now))
			}
		}
		return sameUIDs(uids, now) && f.cloud.Len() == 3, describe(now)
	}
	f.consistently(2*unhealthy, "the pool kept while the API server is not ready", kept)

	// The kubelets report again, then the API server is ready: nothing was replaced.
	for _, m := range ms {
		f.kubelet.SetReady(t, m.Status.NodeRef.Name, true)
	}
	f.waitHealthy(metav1.ConditionTrue, 3)
	f.mgr.SetFault(nil)
	f.consistently(2*unhealthy, "the pool kept once the API server is ready again", kept)

	// The control: with the API server ready, one Node NotReady past the timeout is replaced.
	f.kubelet.SetReady(t, ms[0].Status.NodeRef.Name, false)
	f.waitReplaced(ms[0], 3)
}

// waitHealthy waits until n Machines have the Healthy condition at status.
func (f *fixture) waitHealthy(status metav1.ConditionStatus, n int) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, fmt.Sprintf("%d machines with Healthy %s", n, status), func() (bool, string) {
		ms := f.machines()
		got := 0
		for _, m := range ms {
			if c := findCond(m.Status.Conditions, v1alpha1.MachineHealthy); c != nil && c.Status == status {
				got++
			}
		}
		return got == n, describe(ms)
	})
}
