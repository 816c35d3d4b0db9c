package scenarios

import (
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// OvershootFreeze adds Machines to a settled MachineSet behind its back, as a runaway script or
// a second controller would. The set and its deployment freeze (condition and event) and delete
// nothing; once the excess is resolved by hand, they thaw and settle at replicas.
//
// The rogue Machines are created once the set has recorded that it settled, and while the
// controller is stopped, so that it finds them all when it starts again. On a loaded machine the
// scenario used to add them before the set's settled status was written, and a set that has not
// settled deletes Machines above replicas as its own excess (it never froze). Created while the
// controller runs, they could also reach its cache one by one, each within the threshold.
func OvershootFreeze(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	md := f.deployment("overshoot", 2, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	f.waitRunning(2)
	f.waitComplete(md)
	var sets v1alpha1.MachineSetList
	if err := env.Client.List(f.ctx, &sets, client.InNamespace(f.ns)); err != nil || len(sets.Items) != 1 {
		t.Fatalf("want one machineset, got %d (%v)", len(sets.Items), err)
	}
	ms := &sets.Items[0]
	// The deployment can be complete before its set has recorded that it settled: only a set
	// that has settled at its spec can tell Machines it did not make from a scale-down of its own.
	envtest.Eventually(t, wait, "machineset settled", func() (bool, string) {
		env.Get(t, ms)
		return ms.Status.ObservedGeneration == ms.Generation && ms.Status.Replicas == 2 && ms.Status.AvailableReplicas == 2,
			fmt.Sprintf("generation %d, status %+v", ms.Generation, ms.Status)
	})
	f.mgr.Stop()
	var wg sync.WaitGroup
	extras := make([]*v1alpha1.Machine, 4)
	for i := range extras {
		extras[i] = &v1alpha1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rogue-%d", i), Namespace: f.ns, Labels: ms.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ms, v1alpha1.GroupVersion.WithKind("MachineSet"))}},
			Spec: ms.Spec.Template.Spec,
		}
		wg.Add(1)
		go func() { defer wg.Done(); f.create(extras[i]) }()
	}
	wg.Wait()
	f.start()
	envtest.Eventually(t, wait, "machineset and deployment frozen", func() (bool, string) {
		env.Get(t, ms)
		env.Get(t, md)
		return condTrue(ms.Status.Conditions, v1alpha1.FrozenCondition) && condTrue(md.Status.Conditions, v1alpha1.FrozenCondition),
			fmt.Sprintf("set generation %d observed %d conditions %v, deployment %v, %d machines", ms.Generation, ms.Status.ObservedGeneration, ms.Status.Conditions, md.Status.Conditions, len(f.machines()))
	})
	// The set found all six at once: it froze before deleting any, and deletes none while frozen.
	live := map[string]bool{}
	for _, m := range f.machines() {
		if m.DeletionTimestamp.IsZero() {
			live[m.Name] = true
		}
	}
	if len(live) != 2+len(extras) {
		t.Fatalf("%d live machines when the set froze, want %d: it deleted some before freezing", len(live), 2+len(extras))
	}
	f.consistently(1500*time.Millisecond, "a frozen set deleting nothing", func() (bool, string) {
		now := map[string]bool{}
		for _, m := range f.machines() {
			if m.DeletionTimestamp.IsZero() {
				now[m.Name] = true
			}
		}
		for name := range live {
			if !now[name] {
				return false, fmt.Sprintf("machine %s is being deleted or gone", name)
			}
		}
		return len(now) == len(live), fmt.Sprintf("%d live machines, was %d", len(now), len(live))
	})
	f.expectEvent(ms, "Frozen")

	// The operator resolves it: remove rogue machines until at most replicas+threshold remain.
	for _, m := range f.machines() {
		if len(f.machines()) <= 3 {
			break
		}
		if m.Name[:5] == "rogue" {
			if err := env.Client.Delete(f.ctx, &m); err != nil {
				t.Fatal(err)
			}
			f.waitGone(&m)
		}
	}
	envtest.Eventually(t, wait, "thawed", func() (bool, string) {
		env.Get(t, ms)
		env.Get(t, md)
		return !condTrue(ms.Status.Conditions, v1alpha1.FrozenCondition) && !condTrue(md.Status.Conditions, v1alpha1.FrozenCondition),
			fmt.Sprintf("set %v", ms.Status.Conditions)
	})
	f.waitRunning(2)
}
