package openstacktest

import (
	"sync"
	"time"
)

// serverOp takes the lock that serializes hypervisor calls for one server, so that a Destroy
// never overtakes the Spawn or Power call it follows. It returns the unlock function.
func (s *Sim) serverOp(id string) func() {
	m, _ := s.ops.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func (s *Sim) logf(format string, args ...any) {
	s.mu.Lock()
	logf := s.opts.Logf
	s.mu.Unlock()
	if logf != nil {
		logf(format, args...)
	}
}

// networkChanged wakes the network sync loop; wake-ups while a sync runs coalesce into one.
func (s *Sim) networkChanged() {
	if s.netDirty == nil {
		return
	}
	select {
	case s.netDirty <- struct{}{}:
	default:
	}
}

// syncNetworkRetry is how long the loop waits before it retries a failed sync.
const syncNetworkRetry = 2 * time.Second

// syncNetworkLoop hands the hypervisor the whole topology after every change, one sync at a time.
func (s *Sim) syncNetworkLoop() {
	defer s.tasks.Done()
	retry := time.NewTimer(0)
	retry.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.netDirty:
		case <-retry.C:
		}
		s.mu.Lock()
		t := s.topology()
		s.mu.Unlock()
		if err := s.opts.Hypervisor.SyncNetwork(s.ctx, t); err != nil && s.ctx.Err() == nil {
			s.logf("openstack-sim: network sync failed, retrying in %s: %v", syncNetworkRetry, err)
			retry.Reset(syncNetworkRetry)
		}
	}
}

// destroyAndRemove deletes a server the way Nova's compute manager does: the machine first, then
// the record with its Nova-owned ports and delete-on-termination volumes. When the hypervisor
// fails, the server stays, in ERROR, so that nothing is left without its record.
func (s *Sim) destroyAndRemove(id string) {
	unlock := s.serverOp(id)
	defer unlock()
	var err error
	if hv := s.opts.Hypervisor; hv != nil {
		err = hv.Destroy(s.ctx, id)
	}
	s.mu.Lock()
	srv, ok := s.st.servers[id]
	var gone *Server
	switch {
	case !ok:
	case err != nil:
		srv.Status, srv.TaskState, srv.Fault, srv.Updated = "ERROR", "", "deleting the machine: "+err.Error(), time.Now()
	default:
		gone = s.removeServer(srv)
	}
	s.mu.Unlock()
	if err != nil {
		s.logf("openstack-sim: server %s: %v", id, err)
	}
	if gone != nil {
		s.ops.Delete(id)
		s.networkChanged()
	}
}
