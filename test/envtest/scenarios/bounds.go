package scenarios

import (
	"fmt"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// bounds watches the namespace's Machines and checks, at every event, the rollout bounds: at
// most replicas+maxSurge Machines exist (counting ones being deleted, whose servers still
// exist), and at least replicas-maxUnavailable are available (not being deleted, Node Ready).
// Every watch event is one observed instant, in etcd's order.
type bounds struct {
	maxMachines, minAvailable int

	mu         sync.Mutex
	machines   map[string]*v1alpha1.Machine
	seen       map[string]bool
	events     int
	peak       int
	violations []string
	w          watch.Interface
	done       chan struct{}
}

// watchBounds starts checking; it lists first and watches from the list's resourceVersion, so
// no event between the two is missed.
func (f *fixture) watchBounds(maxMachines, minAvailable int) *bounds {
	f.t.Helper()
	var list v1alpha1.MachineList
	if err := f.env.Client.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatalf("listing machines: %v", err)
	}
	b := &bounds{maxMachines: maxMachines, minAvailable: minAvailable, machines: map[string]*v1alpha1.Machine{},
		seen: map[string]bool{}, done: make(chan struct{})}
	for i := range list.Items {
		b.machines[list.Items[i].Name] = &list.Items[i]
		b.seen[string(list.Items[i].UID)] = true
	}
	b.check("initial list")
	w, err := f.env.Client.Watch(f.ctx, &v1alpha1.MachineList{}, client.InNamespace(f.ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		f.t.Fatalf("watching machines: %v", err)
	}
	b.w = w
	go func() {
		defer close(b.done)
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*v1alpha1.Machine)
			if !ok {
				continue
			}
			b.mu.Lock()
			b.events++
			b.seen[string(m.UID)] = true
			if ev.Type == watch.Deleted {
				delete(b.machines, m.Name)
			} else {
				b.machines[m.Name] = m
			}
			b.check(fmt.Sprintf("%s %s (rv %s)", ev.Type, m.Name, m.ResourceVersion))
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *bounds) check(at string) {
	total, avail := len(b.machines), 0
	for _, m := range b.machines {
		if m.DeletionTimestamp.IsZero() && condTrue(m.Status.Conditions, v1alpha1.MachineNodeReady) {
			avail++
		}
	}
	b.peak = max(b.peak, total)
	if total > b.maxMachines {
		b.violations = append(b.violations, fmt.Sprintf("%s: %d machines, more than %d", at, total, b.maxMachines))
	}
	if avail < b.minAvailable {
		b.violations = append(b.violations, fmt.Sprintf("%s: %d available, fewer than %d", at, avail, b.minAvailable))
	}
}

// stop ends the watch and fails the test on any violation; it returns how many events were
// checked and how many distinct Machines were seen.
func (b *bounds) stop(t *testing.T) (events, machines int) {
	t.Helper()
	b.w.Stop()
	<-b.done
	for _, v := range b.violations {
		t.Errorf("rollout bound violated at %s", v)
	}
	return b.events, len(b.seen)
}
