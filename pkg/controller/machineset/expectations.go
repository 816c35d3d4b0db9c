package machineset

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// expectationTTL bounds how long a creation or deletion the cache has not shown yet is trusted;
// after it the cache is believed again, so a lost watch event cannot wedge a set.
const expectationTTL = 2 * time.Minute

// expectations remember, per MachineSet, the Machines a reconcile created or deleted until the
// informer cache shows it. Without them a reconcile running on a stale cache would create or
// delete the same Machines twice (the ReplicaSet controller keeps the same kind of books).
type expectations struct {
	mu   sync.Mutex
	sets map[string]*setExpectations
	now  func() time.Time
}

type setExpectations struct {
	created map[string]time.Time // names created, not yet in the cache
	deleted map[string]time.Time // names deleted, not yet deleting in the cache
	// early holds the names whose create event came before the creating reconcile recorded
	// them: the watch can be faster than the goroutine that made the request.
	early map[string]time.Time
}

func newExpectations() *expectations {
	return &expectations{sets: map[string]*setExpectations{}, now: time.Now}
}

func (e *expectations) get(key string) *setExpectations {
	s := e.sets[key]
	if s == nil {
		s = &setExpectations{created: map[string]time.Time{}, deleted: map[string]time.Time{}, early: map[string]time.Time{}}
		e.sets[key] = s
	}
	return s
}

func (e *expectations) created(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.get(key)
	if _, seen := s.early[name]; seen {
		delete(s.early, name)
		return
	}
	s.created[name] = e.now()
}

func (e *expectations) deleted(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deleted[name] = e.now()
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sets, key)
}

// observe settles the expectations the cache now confirms, and returns how many created Machines
// the cache does not show yet and which cached Machines are in fact being deleted.
func (e *expectations) observe(key string, cached map[string]*v1alpha1.Machine) (creating int, deletingNow map[string]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.sets[key]
	if s == nil {
		return 0, nil
	}
	now := e.now()
	deletingNow = map[string]bool{}
	for name, at := range s.created {
		if _, ok := cached[name]; ok || now.Sub(at) > expectationTTL {
			delete(s.created, name)
			continue
		}
		creating++
	}
	for name, at := range s.early {
		if now.Sub(at) > expectationTTL {
			delete(s.early, name)
		}
	}
	for name, at := range s.deleted {
		m, ok := cached[name]
		if !ok || machineutil.Deleting(m) || now.Sub(at) > expectationTTL {
			delete(s.deleted, name)
			continue
		}
		deletingNow[name] = true
	}
	return creating, deletingNow
}

// seen settles the expectation of a created Machine when its create or delete event arrives.
// The set's reconcile comes later (coalesce.MachineEventDelay), and by then the Machine may be
// gone again (deleted while its server was being created): the cache would never show the name,
// and the set would wait for it until expectationTTL before it replaced the Machine.
// A create event that comes before the creation was recorded is remembered for created.
func (e *expectations) seen(key, name string, create bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.get(key)
	if _, ok := s.created[name]; ok {
		delete(s.created, name)
	} else if create {
		s.early[name] = e.now()
	}
}

// seeingCreations wraps h so that a Machine's create and delete events settle its set's
// expectation first.
func seeingCreations(h handler.EventHandler, e *expectations) handler.EventHandler {
	seen := func(o client.Object, create bool) {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "MachineSet" {
			e.seen(o.GetNamespace()+"/"+ref.Name, o.GetName(), create)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			seen(ev.Object, true)
			h.Create(ctx, ev, q)
		},
		DeleteFunc: func(ctx context.Context, ev event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			seen(ev.Object, false)
			h.Delete(ctx, ev, q)
		},
		UpdateFunc:  h.Update,
		GenericFunc: h.Generic,
	}
}
