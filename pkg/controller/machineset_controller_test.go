package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

func machineAt(name string, created time.Time, mutate ...func(*v1alpha1.Machine)) *v1alpha1.Machine {
	m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(created)}}
	m.Status.Conditions = []metav1.Condition{{Type: v1alpha1.MachineNodeReady, Status: metav1.ConditionTrue}}
	for _, f := range mutate {
		f(m)
	}
	return m
}

func TestPickForDeletion(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := machineAt("old", t0)
	mid := machineAt("mid", t0.Add(time.Minute))
	young := machineAt("young", t0.Add(2*time.Minute))
	marked := machineAt("marked", t0.Add(3*time.Minute), func(m *v1alpha1.Machine) {
		m.Annotations = map[string]string{v1alpha1.DeleteMachineAnnotation: "yes"}
	})
	failed := machineAt("failed", t0.Add(4*time.Minute), func(m *v1alpha1.Machine) {
		r := v1alpha1.CreateMachineError
		m.Status.ErrorReason = &r
	})
	notReady := machineAt("notready", t0.Add(5*time.Minute), func(m *v1alpha1.Machine) { m.Status.Conditions = nil })
	all := []*v1alpha1.Machine{old, mid, young, marked, failed, notReady}
	tests := []struct {
		name   string
		policy v1alpha1.MachineSetDeletePolicy
		n      int
		want   []string
	}{
		{name: "annotated, failed and not ready go first", policy: v1alpha1.OldestMachineSetDeletePolicy, n: 3, want: []string{"marked", "failed", "notready"}},
		{name: "oldest", policy: v1alpha1.OldestMachineSetDeletePolicy, n: 5, want: []string{"marked", "failed", "notready", "old", "mid"}},
		{name: "newest", policy: v1alpha1.NewestMachineSetDeletePolicy, n: 5, want: []string{"marked", "failed", "notready", "young", "mid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pickForDeletion(all, tt.policy, tt.n)
			for i, m := range got {
				if m.Name != tt.want[i] {
					t.Fatalf("pick %d = %s, want %v", i, m.Name, tt.want)
				}
			}
		})
	}
	t.Run("random is stable", func(t *testing.T) {
		a := pickForDeletion([]*v1alpha1.Machine{old, mid, young}, v1alpha1.RandomMachineSetDeletePolicy, 1)
		b := pickForDeletion([]*v1alpha1.Machine{young, old, mid}, v1alpha1.RandomMachineSetDeletePolicy, 1)
		if a[0].Name != b[0].Name {
			t.Fatalf("random picks %s then %s from the same machines", a[0].Name, b[0].Name)
		}
	})
}

func TestExpectations(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newExpectations()
	e.now = func() time.Time { return now }
	e.created("ns/ms", "a")
	e.deleted("ns/ms", "b")
	b := machineAt("b", now)
	creating, deletingNow := e.observe("ns/ms", map[string]*v1alpha1.Machine{"b": b})
	if creating != 1 || !deletingNow["b"] {
		t.Fatalf("before the cache catches up: creating=%d deleting=%v", creating, deletingNow)
	}
	b.DeletionTimestamp = &metav1.Time{Time: now}
	creating, deletingNow = e.observe("ns/ms", map[string]*v1alpha1.Machine{"a": machineAt("a", now), "b": b})
	if creating != 0 || len(deletingNow) != 0 {
		t.Fatalf("after: creating=%d deleting=%v", creating, deletingNow)
	}
	e.created("ns/ms", "lost")
	now = now.Add(expectationTTL + time.Second)
	if creating, _ := e.observe("ns/ms", nil); creating != 0 {
		t.Fatalf("an expectation outlived its TTL")
	}
}

func TestOrphans(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	insts := []cloud.Instance{{ID: "1", MachineUID: "live"}, {ID: "2", MachineUID: "gone"}, {ID: "3", MachineUID: "creating"}, {ID: "4"}}
	live := map[string]bool{"live": true}
	creating := func(uid string) bool { return uid == "creating" }
	first := map[string]time.Time{}
	seen := map[string]bool{}
	if got := orphans(insts, live, creating, first, seen, t0, time.Minute); len(got) != 0 {
		t.Fatalf("orphans at first sight = %v, want none before the grace period", got)
	}
	got := orphans(insts, live, creating, first, map[string]bool{}, t0.Add(time.Minute), time.Minute)
	if len(got) != 1 || got[0].ID != "2" {
		t.Fatalf("orphans after the grace period = %v, want only server 2", got)
	}
	if !seen["gone"] || seen["live"] || seen["creating"] {
		t.Fatalf("seen = %v", seen)
	}
}

// TestExpectationsSeen: a Machine's create or delete event settles its creation at once, also
// when the Machine is gone before the set's reconcile could see it in the cache, and a create
// event that beats the recording of the creation still settles it.
func TestExpectationsSeen(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newExpectations()
	e.now = func() time.Time { return now }

	e.created("ns/ms", "vanished")
	e.seen("ns/ms", "vanished", false) // its delete event; the cache never showed it
	if creating, _ := e.observe("ns/ms", nil); creating != 0 {
		t.Fatalf("a Machine deleted before the cache showed it still counts as creating")
	}

	e.seen("ns/ms", "fast", true) // the watch was faster than the creating goroutine
	e.created("ns/ms", "fast")
	if creating, _ := e.observe("ns/ms", nil); creating != 0 {
		t.Fatalf("a creation seen before it was recorded counts as creating")
	}

	e.seen("ns/ms", "foreign", true) // made by someone else: forgotten after the TTL
	now = now.Add(expectationTTL + time.Second)
	e.observe("ns/ms", nil)
	e.created("ns/ms", "foreign")
	if creating, _ := e.observe("ns/ms", nil); creating != 1 {
		t.Fatalf("an early sighting outlived its TTL")
	}
}
