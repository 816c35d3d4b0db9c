package cloudtest

import (
	"fmt"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// SetUnreachable makes every call fail (true) or work again (false).
func (p *Provider) SetUnreachable(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unreachable = down
}

// SetCreateDelay keeps new servers in StateCreating for d.
func (p *Provider) SetCreateDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.createDelay = d
}

// SetDeletePolls sets how many Delete calls answer done=false before a server is gone.
func (p *Provider) SetDeletePolls(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deletePolls = n
}

// SetCreateError makes Create return fn's error for the Machines it returns one for.
func (p *Provider) SetCreateError(fn func(m *v1alpha1.Machine) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.createErr = fn
}

// SetInstanceQuota caps the servers the project may hold at n (0: no cap), servers being
// deleted included, as Nova counts them: a Create beyond it is refused with a capacity error.
func (p *Provider) SetInstanceQuota(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quota = n
}

// SetValidateError makes Validate return fn's error.
func (p *Provider) SetValidateError(fn func(m *v1alpha1.Machine) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.validateErr = fn
}

// SetDeleteStuck makes the deletion of the Machine's server never finish (true), or finish on
// the next call (false).
func (p *Provider) SetDeleteStuck(m *v1alpha1.Machine, stuck bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.instances[string(m.UID)]
	if !ok {
		return fmt.Errorf("no server for machine %s", m.Name)
	}
	s.stuck = stuck
	if !stuck {
		s.polls = 0
	}
	return nil
}

// RemoveOutOfBand deletes the Machine's server behind the controller's back, as an operator
// clicking in the cloud console would.
func (p *Provider) RemoveOutOfBand(m *v1alpha1.Machine) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.instances[string(m.UID)]; !ok {
		return fmt.Errorf("no server for machine %s", m.Name)
	}
	delete(p.instances, string(m.UID))
	return nil
}

// AddOrphan creates a server that no Machine owns, as a crash between create and bookkeeping
// would leave behind.
func (p *Provider) AddOrphan(name, machineUID string) cloud.Instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	id := fmt.Sprintf("srv-%06d", p.seq)
	s := &server{createdAt: p.now(), inst: cloud.Instance{ID: id, Name: name, ProviderID: ProviderIDPrefix + id,
		MachineUID: machineUID, State: cloud.StateRunning}}
	p.instances[machineUID] = s
	return s.inst
}

// Instance returns the Machine's server, or nil.
func (p *Provider) Instance(m *v1alpha1.Machine) *cloud.Instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.instances[string(m.UID)]; ok {
		return p.view(s)
	}
	return nil
}

// Len returns how many servers exist, including ones being deleted.
func (p *Provider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.instances)
}

// Counts returns how many servers were ever created and how many deletions were started.
func (p *Provider) Counts() (creates, deletes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.creates, p.deletes
}
