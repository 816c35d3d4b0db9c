package machineset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

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
