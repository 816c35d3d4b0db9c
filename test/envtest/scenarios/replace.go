package scenarios

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// OutOfBandDeletion removes a server behind the controller's back; its kubelet falls silent and
// the Node turns NotReady. The Machine must be replaced.
func OutOfBandDeletion(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	f.create(f.deployment("oob", 2, intstr.FromInt32(1), intstr.FromInt32(0)))
	victim := f.waitRunning(2)[0]
	if err := f.cloud.RemoveOutOfBand(&victim); err != nil {
		t.Fatal(err)
	}
	f.kubelet.SetReady(t, victim.Status.NodeRef.Name, false)
	f.waitReplaced(victim, 2)
}

// NodeNeverJoins keeps one Machine's Node from registering; after the join timeout the Machine
// must be replaced, and the replacement joins.
func NodeNeverJoins(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	var mu sync.Mutex
	stuck := ""
	f := setup(t, env, newCloud, func(o *controller.Options) { o.JoinTimeout = 3 * time.Second },
		envtest.NeverJoin(func(m *v1alpha1.Machine) bool {
			mu.Lock()
			defer mu.Unlock()
			if stuck == "" {
				stuck = m.Name
			}
			return m.Name == stuck
		}))
	f.create(f.deployment("late", 2, intstr.FromInt32(1), intstr.FromInt32(0)))
	var first v1alpha1.Machine
	envtest.Eventually(t, wait, "the machine whose node never joins", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range f.machines() {
			if m.Name == stuck {
				first = m
				return true, ""
			}
		}
		return false, "no machine chosen yet"
	})
	f.waitReplaced(first, 2)
}

// waitReplaced waits until gone no longer exists and want Machines run again.
func (f *fixture) waitReplaced(gone v1alpha1.Machine, want int) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, fmt.Sprintf("machine %s replaced", gone.Name), func() (bool, string) {
		ms := f.machines()
		running := 0
		for _, m := range ms {
			if m.UID == gone.UID {
				return false, fmt.Sprintf("machine %s still exists (phase %s, conditions %v)", m.Name, m.Status.Phase, m.Status.Conditions)
			}
			if m.Status.Phase == v1alpha1.MachinePhaseRunning {
				running++
			}
		}
		return running == want && len(ms) == want && f.cloud.Len() == want,
			fmt.Sprintf("%d machines, %d running, %d servers", len(ms), running, f.cloud.Len())
	})
}
