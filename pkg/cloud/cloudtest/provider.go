// Package cloudtest provides an in-memory cloud.Provider for controller tests and benchmarks, in
// the way net/http/httptest serves HTTP tests. It keeps servers in a map keyed by Machine UID,
// hands out addresses from the 198.18.0.0/15 benchmarking range (never routed, never contacted),
// and lets a test break it on purpose: make the cloud unreachable, remove a server behind the
// controller's back, make deletions hang, or fail creates.
package cloudtest

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// ServerIDAnnotation is recorded on the Machine through the MachineUpdater when a server is
// created, as a real provider records the ports and volumes it allocated.
const ServerIDAnnotation = "cloudtest.slipway.dev/server-id"

// ProviderIDPrefix is the scheme of the fake's provider IDs.
const ProviderIDPrefix = "fake:///"

// nextAddr is shared by every Provider in the process, so that two fakes never hand out the same
// address and a stale Node of one test can never match a server of another by address.
var nextAddr atomic.Uint32

// Provider is an in-memory cloud. The zero value is not usable; call New.
type Provider struct {
	mu          sync.Mutex
	now         func() time.Time
	instances   map[string]*server // by Machine UID
	unreachable bool
	createDelay time.Duration
	deletePolls int
	createErr   func(m *v1alpha1.Machine) error
	quota       int // most servers the project may hold; 0: no limit
	validateErr func(m *v1alpha1.Machine) error
	creates     int
	deletes     int
	seq         int
}

type server struct {
	inst      cloud.Instance
	createdAt time.Time
	stuck     bool // Delete never finishes
	polls     int  // Delete calls still answered with done=false
}

// New returns an empty cloud. Servers are Running as soon as they are created and gone after the
// first Delete call that follows the one that started their deletion.
func New() *Provider {
	return &Provider{now: time.Now, instances: map[string]*server{}, deletePolls: 1}
}

var _ cloud.Provider = (*Provider)(nil)

// errUnreachable is what every call returns while the cloud is unreachable.
var errUnreachable = fmt.Errorf("cloudtest: cloud API unreachable")

// Validate returns the error set with SetValidateError, if any.
func (p *Provider) Validate(_ context.Context, m *v1alpha1.Machine) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreachable {
		return errUnreachable
	}
	if p.validateErr != nil {
		return p.validateErr(m)
	}
	return nil
}

// Get returns the Machine's server by UID.
func (p *Provider) Get(_ context.Context, m *v1alpha1.Machine) (*cloud.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreachable {
		return nil, errUnreachable
	}
	s, ok := p.instances[string(m.UID)]
	if !ok {
		return nil, cloud.ErrInstanceNotFound
	}
	return p.view(s), nil
}

// view returns a copy of the server with its state as of now.
func (p *Provider) view(s *server) *cloud.Instance {
	inst := s.inst
	if inst.State == cloud.StateCreating && p.now().Sub(s.createdAt) >= p.createDelay {
		s.inst.State = cloud.StateRunning
		inst.State = cloud.StateRunning
	}
	inst.Addresses = append([]corev1.NodeAddress(nil), s.inst.Addresses...)
	return &inst
}

// Create returns the Machine's server, creating it if it does not exist yet.
func (p *Provider) Create(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater, _ string) (*cloud.Instance, error) {
	p.mu.Lock()
	if p.unreachable {
		p.mu.Unlock()
		return nil, errUnreachable
	}
	if s, ok := p.instances[string(m.UID)]; ok {
		inst := p.view(s)
		p.mu.Unlock()
		return inst, nil
	}
	if p.createErr != nil {
		if err := p.createErr(m); err != nil {
			p.mu.Unlock()
			return nil, err
		}
	}
	if p.quota > 0 && len(p.instances) >= p.quota {
		used := len(p.instances)
		p.mu.Unlock()
		return nil, cloud.Capacity("creating server: Quota exceeded for instances: Requested 1, but already used %d of %d instances", used, p.quota)
	}
	p.seq++
	p.creates++
	id := fmt.Sprintf("srv-%06d", p.seq)
	s := &server{createdAt: p.now(), polls: p.deletePolls, inst: cloud.Instance{
		ID:         id,
		Name:       m.Name,
		ProviderID: ProviderIDPrefix + id,
		MachineUID: string(m.UID),
		State:      cloud.StateCreating,
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: allocAddr()}},
		CPUs:       2,
		MemoryMiB:  4096,
	}}
	p.instances[string(m.UID)] = s
	inst := p.view(s)
	p.mu.Unlock()
	// Record the allocation as a real provider must, outside the lock: update talks to the API.
	if update != nil {
		if err := update(ctx, func(m *v1alpha1.Machine) {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[ServerIDAnnotation] = id
		}); err != nil {
			return nil, fmt.Errorf("recording server %s on machine %s: %w", id, m.Name, err)
		}
	}
	return inst, nil
}

// allocAddr returns the next address of 198.18.0.0/15, skipping .0 and .255.
func allocAddr() string {
	for {
		n := nextAddr.Add(1)
		if b := byte(n); b == 0 || b == 255 {
			continue
		}
		base := netip.MustParseAddr("198.18.0.0").As4()
		v := (uint32(base[0])<<24 | uint32(base[1])<<16) + n%(1<<17)
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	}
}

// Delete starts deleting the Machine's server and reports done once it is gone.
func (p *Provider) Delete(_ context.Context, m *v1alpha1.Machine, _ cloud.MachineUpdater) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreachable {
		return false, errUnreachable
	}
	s, ok := p.instances[string(m.UID)]
	if !ok {
		return true, nil
	}
	if s.inst.State != cloud.StateDeleting {
		p.deletes++
		s.inst.State = cloud.StateDeleting
	}
	if s.stuck {
		return false, nil
	}
	if s.polls > 0 {
		s.polls--
		return false, nil
	}
	delete(p.instances, string(m.UID))
	return true, nil
}

// List returns every server, sorted by name.
func (p *Provider) List(_ context.Context, _ *v1alpha1.Machine) ([]cloud.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreachable {
		return nil, errUnreachable
	}
	out := make([]cloud.Instance, 0, len(p.instances))
	for _, s := range p.instances {
		out = append(out, *p.view(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
