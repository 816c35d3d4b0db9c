package controller

import (
	"sync"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
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
}

func newExpectations() *expectations {
	return &expectations{sets: map[string]*setExpectations{}, now: time.Now}
}

func (e *expectations) get(key string) *setExpectations {
	s := e.sets[key]
	if s == nil {
		s = &setExpectations{created: map[string]time.Time{}, deleted: map[string]time.Time{}}
		e.sets[key] = s
	}
	return s
}

func (e *expectations) created(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).created[name] = e.now()
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
	for name, at := range s.deleted {
		m, ok := cached[name]
		if !ok || deleting(m) || now.Sub(at) > expectationTTL {
			delete(s.deleted, name)
			continue
		}
		deletingNow[name] = true
	}
	return creating, deletingNow
}
