// Package cloudtrack wraps the cloud.Provider the controllers share, to learn whether the cloud
// answers at all and which Machines have a Create in flight.
package cloudtrack

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// UnreachableAfter is how many provider calls in a row must fail, other than with "not found", a
// terminal error or a capacity error (all answers of a cloud that works), before the cloud counts as unreachable and health-based replacement freezes.
// The API server probe uses the same count.
const UnreachableAfter = 3

// Provider wraps a cloud.Provider to learn two things the controllers need: whether the cloud
// answers at all, and which Machines have a Create in flight (the orphan sweep must skip those).
type Provider struct {
	cloud.Provider

	mu       sync.Mutex
	failures int
	inFlight map[types.UID]time.Time
}

// New wraps p.
func New(p cloud.Provider) *Provider {
	return &Provider{Provider: p, inFlight: map[types.UID]time.Time{}}
}

func (t *Provider) record(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, terminal := cloud.AsTerminal(err)
	_, capacity := cloud.AsCapacity(err)
	if err == nil || terminal || capacity || errors.Is(err, cloud.ErrInstanceNotFound) {
		t.failures = 0
		return
	}
	t.failures++
}

// Reachable reports whether the cloud answered one of the last few calls.
func (t *Provider) Reachable() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failures < UnreachableAfter
}

// Creating reports whether a Create for the Machine UID is running now.
func (t *Provider) Creating(uid types.UID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.inFlight[uid]
	return ok
}

func (t *Provider) Get(ctx context.Context, m *v1alpha1.Machine) (*cloud.Instance, error) {
	inst, err := t.Provider.Get(ctx, m)
	t.record(err)
	return inst, err
}

func (t *Provider) Create(ctx context.Context, m *v1alpha1.Machine, u cloud.MachineUpdater, userdata string) (*cloud.Instance, error) {
	t.mu.Lock()
	t.inFlight[m.UID] = time.Now()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.inFlight, m.UID)
		t.mu.Unlock()
	}()
	inst, err := t.Provider.Create(ctx, m, u, userdata)
	t.record(err)
	return inst, err
}

func (t *Provider) Delete(ctx context.Context, m *v1alpha1.Machine, u cloud.MachineUpdater) (bool, error) {
	done, err := t.Provider.Delete(ctx, m, u)
	t.record(err)
	return done, err
}

func (t *Provider) Validate(ctx context.Context, m *v1alpha1.Machine) error {
	err := t.Provider.Validate(ctx, m)
	t.record(err)
	return err
}

func (t *Provider) List(ctx context.Context, tmpl *v1alpha1.Machine) ([]cloud.Instance, error) {
	out, err := t.Provider.List(ctx, tmpl)
	t.record(err)
	return out, err
}
