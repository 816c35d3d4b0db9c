package openstacktest

import (
	"fmt"
	"net/http"
	"time"
)

// attachNetwork binds an existing port or makes a Nova-owned port for one network request.
// Callers hold s.mu.
func (s *Sim) attachNetwork(srv *Server, n networkRequest, sgIDs []string) (*Port, *apiError) {
	if n.Port != "" {
		p := s.st.ports[n.Port]
		p.DeviceID, p.DeviceOwner, p.Updated = srv.ID, "compute:"+AvailabilityZone, time.Now()
		p.Revision++
		return p, nil
	}
	var fixed []fixedIPRequest
	if n.FixedIP != "" {
		fixed = []fixedIPRequest{{IPAddress: n.FixedIP}}
	}
	owner := "compute:" + AvailabilityZone
	p, e := s.newPort(portRequest{NetworkID: n.UUID, FixedIPs: fixed, SecurityGroups: &sgIDs,
		DeviceID: &srv.ID, DeviceOwner: &owner})
	if e != nil {
		return nil, e
	}
	p.NovaOwned = true
	return p, nil
}

// finishBuild ends a server's BUILD: the hypervisor spawns its machine and it turns ACTIVE, or
// ERROR when a failure is queued or the spawn fails.
func (s *Sim) finishBuild(id string) {
	unlock := s.serverOp(id)
	defer unlock()
	s.mu.Lock()
	srv, ok := s.st.servers[id]
	if !ok || srv.Status != "BUILD" || srv.TaskState != "" {
		s.mu.Unlock()
		return
	}
	var fault string
	if len(s.st.serverFailures) > 0 {
		fault, s.st.serverFailures = s.st.serverFailures[0], s.st.serverFailures[1:]
	}
	m := s.machine(srv)
	hv := s.opts.Hypervisor
	s.mu.Unlock()

	if fault == "" && hv != nil {
		if err := hv.Spawn(s.ctx, m); err != nil {
			fault = err.Error()
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok = s.st.servers[id]
	if !ok || srv.Status != "BUILD" {
		return
	}
	now := time.Now()
	srv.Updated = now
	if fault != "" {
		srv.Status, srv.Fault = "ERROR", fault
		return
	}
	srv.Status, srv.LaunchedAt = "ACTIVE", now
}

func (s *Sim) deleteServer(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e != nil {
		s.mu.Unlock()
		writeError(w, serviceCompute, e)
		return
	}
	delay := s.opts.DeleteTime
	already := srv.TaskState == "deleting" || s.st.stuckDeletes[srv.ID]
	srv.TaskState, srv.Updated = "deleting", time.Now()
	id := srv.ID
	var gone *Server
	if delay == 0 && !already && s.opts.Hypervisor == nil {
		gone = s.removeServer(srv)
	}
	s.mu.Unlock()
	switch {
	case gone != nil:
	case !already:
		s.after(delay, func() {
			s.mu.Lock()
			_, ok := s.st.servers[id]
			stuck := s.st.stuckDeletes[id]
			s.mu.Unlock()
			if ok && !stuck {
				s.destroyAndRemove(id)
			}
		})
	}
	w.WriteHeader(http.StatusNoContent)
}

// removeServer deletes a server with what Nova deletes alongside it. Callers hold s.mu.
func (s *Sim) removeServer(srv *Server) *Server {
	snap := s.copyServer(srv)
	delete(s.st.servers, srv.ID)
	delete(s.st.stuckDeletes, srv.ID)
	s.releaseServerResources(srv, true)
	if g := s.st.servergroups[srv.ServerGroupID]; g != nil {
		for i, m := range g.Members {
			if m == srv.ID {
				g.Members = append(g.Members[:i], g.Members[i+1:]...)
				break
			}
		}
	}
	return &snap
}

// releaseServerResources deletes Nova-owned ports, detaches the caller's ports, and deletes or
// detaches volumes. Callers hold s.mu.
func (s *Sim) releaseServerResources(srv *Server, withVolumes bool) {
	now := time.Now()
	for _, id := range srv.PortIDs {
		p, ok := s.st.ports[id]
		if !ok {
			continue
		}
		if p.NovaOwned {
			s.deletePortLocked(p)
			continue
		}
		p.DeviceID, p.DeviceOwner, p.Updated = "", "", now
		p.Revision++
	}
	if !withVolumes {
		return
	}
	for _, id := range srv.VolumeIDs {
		v, ok := s.st.volumes[id]
		if !ok {
			continue
		}
		if v.DeleteOnTermination && !s.st.leakVolumes {
			delete(s.st.volumes, id)
			continue
		}
		v.Status, v.ServerID, v.Updated = "available", "", now
	}
}

// VanishServer deletes a server at once, as an operator deleting it behind the caller's back; its
// machine goes with it.
func (s *Sim) VanishServer(id string) error {
	s.mu.Lock()
	srv, ok := s.st.servers[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("no server %s", id)
	}
	s.removeServer(srv)
	s.mu.Unlock()
	s.networkChanged()
	if hv := s.opts.Hypervisor; hv != nil {
		unlock := s.serverOp(id)
		defer unlock()
		defer s.ops.Delete(id)
		if err := hv.Destroy(s.ctx, id); err != nil {
			return fmt.Errorf("server %s vanished, but its machine did not: %w", id, err)
		}
	}
	return nil
}

// BreakServer puts a server in ERROR with the given fault, as a failed host would. Its machine,
// if it has one, is powered off: a server in ERROR runs nothing.
func (s *Sim) BreakServer(id, fault string) error {
	s.mu.Lock()
	srv, ok := s.st.servers[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("no server %s", id)
	}
	srv.Status, srv.Fault, srv.Updated = "ERROR", fault, time.Now()
	s.mu.Unlock()
	if hv := s.opts.Hypervisor; hv != nil {
		unlock := s.serverOp(id)
		defer unlock()
		if err := hv.Power(s.ctx, id, PowerOff); err != nil {
			return fmt.Errorf("server %s is in ERROR, but powering off its machine failed: %w", id, err)
		}
	}
	return nil
}

// LeakBootVolumes makes deleted servers leave their delete-on-termination volumes behind
// (available), as Nova does when the volume service fails during a delete.
func (s *Sim) LeakBootVolumes(leak bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.leakVolumes = leak
}

// PeakServers is the largest number of servers that existed at once since the last
// ResetPeakServers (or the start). Servers being deleted count until they are gone.
func (s *Sim) PeakServers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.peakServers
}

// ResetPeakServers restarts the peak count from the servers that exist now.
func (s *Sim) ResetPeakServers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.peakServers = len(s.st.servers)
}

// SetDeleteStuck makes the deletion of a server hang (true): a DELETE is accepted and the server
// stays with task_state "deleting", as when a compute host is down. Unsticking it (false)
// finishes a deletion that was requested meanwhile.
func (s *Sim) SetDeleteStuck(id string, stuck bool) error {
	s.mu.Lock()
	srv, ok := s.st.servers[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("no server %s", id)
	}
	finish := false
	if stuck {
		s.st.stuckDeletes[id] = true
	} else {
		delete(s.st.stuckDeletes, id)
		finish = srv.TaskState == "deleting"
	}
	s.mu.Unlock()
	if finish {
		s.destroyAndRemove(id)
	}
	return nil
}
