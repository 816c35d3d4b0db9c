package openstacktest

import (
	"net/http"
	"net/netip"
	"time"
)

type memberRequest struct {
	Name           *string   `json:"name"`
	Address        string    `json:"address"`
	ProtocolPort   *int      `json:"protocol_port"`
	SubnetID       string    `json:"subnet_id"`
	Weight         *int      `json:"weight"`
	AdminStateUp   *bool     `json:"admin_state_up"`
	ProjectID      string    `json:"project_id"`
	Tags           *[]string `json:"tags"`
	Backup         *bool     `json:"backup"`
	MonitorAddress *string   `json:"monitor_address"`
	MonitorPort    *int      `json:"monitor_port"`
}

var memberUpdateAttrs = []string{"name", "weight", "admin_state_up", "tags", "backup", "monitor_address", "monitor_port"}

var memberCreateAttrs = append([]string{"address", "protocol_port", "subnet_id", "project_id"}, memberUpdateAttrs...)

// poolOf finds the pool of a member call; Octavia answers 404 naming the pool. Callers hold s.mu.
func (s *Sim) poolOf(r *http.Request) (*Pool, *apiError) {
	p, ok := s.st.octavia.pools[r.PathValue("pool")]
	if !ok {
		return nil, lbNotFound("Pool", r.PathValue("pool"))
	}
	return p, nil
}

func (s *Sim) listMembers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, e := s.poolOf(r)
	s.mu.Unlock()
	if e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaList("members", func() []map[string]any { return s.renderMembers(p.ID) })(w, r)
}

func (s *Sim) getMember(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, e := s.poolOf(r)
	if e == nil {
		if m, ok := s.st.octavia.members[r.PathValue("id")]; ok && m.PoolID == p.ID {
			writeJSON(w, http.StatusOK, map[string]any{"member": s.renderMember(m)})
			return
		}
		e = lbNotFound("Member", r.PathValue("id"))
	}
	writeError(w, serviceLoadBalancer, e)
}

func (s *Sim) createMember(w http.ResponseWriter, r *http.Request) {
	var req memberRequest
	if e := decodeOctavia(r, "member", memberCreateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusCreated, "member", func() (map[string]any, string, *apiError) {
		p, e := s.poolOf(r)
		if e != nil {
			return nil, "", e
		}
		m, e := s.newMember(p, req)
		if e != nil {
			return nil, "", e
		}
		return s.renderMember(m), p.LoadBalancerID, nil
	})
}

// newMember validates a member as Octavia does and records it PENDING_CREATE. Octavia keeps
// the address only: nothing ties the member to a server or port. Callers hold s.mu.
func (s *Sim) newMember(p *Pool, req memberRequest) (*Member, *apiError) {
	switch {
	case req.Address == "":
		return nil, mandatory("address")
	case req.ProtocolPort == nil:
		return nil, mandatory("protocol_port")
	case req.ProjectID != "" && req.ProjectID != ProjectID:
		return nil, errf(403, "Policy does not allow this request to be performed.")
	}
	if _, err := netip.ParseAddr(req.Address); err != nil {
		return nil, errf(400, "Invalid input for field/attribute address. Value: '%s'. Value should be IPv4 or IPv6 format", req.Address)
	}
	if e := inRange("protocol_port", *req.ProtocolPort, 1, 65535); e != nil {
		return nil, e
	}
	if req.SubnetID != "" {
		if _, ok := s.st.subnets[req.SubnetID]; !ok {
			return nil, errf(400, "Subnet %s not found.", req.SubnetID)
		}
	}
	now := time.Now()
	m := &Member{ID: newID(), PoolID: p.ID, ProvisioningStatus: lbPendingCreate, OperatingStatus: lbOffline,
		AdminStateUp: true, Address: req.Address, ProtocolPort: *req.ProtocolPort, SubnetID: req.SubnetID,
		Weight: 1, Tags: []string{}, Created: now, seq: s.st.next()}
	if e := applyMember(m, req); e != nil {
		return nil, e
	}
	lb := s.st.octavia.lbs[p.LoadBalancerID]
	if e := mutable(lb); e != nil {
		return nil, e
	}
	for _, other := range s.st.octavia.members {
		if other.PoolID == p.ID && other.Address == m.Address && other.ProtocolPort == m.ProtocolPort {
			return nil, errf(409, "Another member on this pool is already using ip %s on protocol_port %d", m.Address, m.ProtocolPort)
		}
	}
	p.ProvisioningStatus = lbPendingUpdate
	s.markPoolParents(p, lb)
	s.st.octavia.members[m.ID] = m
	return m, nil
}

// applyMember validates what a create or update sets and applies it to m; nothing is applied
// when it returns an error.
func applyMember(m *Member, req memberRequest) *apiError {
	switch {
	case req.Backup != nil && *req.Backup:
		return unsupported("backup members are not simulated")
	case deref(req.MonitorAddress) != "" || req.MonitorPort != nil:
		return unsupported("monitoring members on another address or port is not simulated")
	}
	if req.Weight != nil {
		if e := inRange("weight", *req.Weight, 0, 256); e != nil {
			return e
		}
		m.Weight = *req.Weight
	}
	setIf(&m.Name, req.Name)
	setIf(&m.AdminStateUp, req.AdminStateUp)
	if req.Tags != nil {
		m.Tags = tagsOf(req.Tags)
	}
	return nil
}

// memberForChange finds a member of the call's pool whose load balancer is mutable.
// Callers hold s.mu.
func (s *Sim) memberForChange(r *http.Request) (*Member, *Pool, *LoadBalancer, *apiError) {
	p, e := s.poolOf(r)
	if e != nil {
		return nil, nil, nil, e
	}
	m, ok := s.st.octavia.members[r.PathValue("id")]
	if !ok || m.PoolID != p.ID {
		return nil, nil, nil, lbNotFound("Member", r.PathValue("id"))
	}
	lb := s.st.octavia.lbs[p.LoadBalancerID]
	if e := mutable(lb); e != nil {
		return nil, nil, nil, e
	}
	return m, p, lb, nil
}

func (s *Sim) updateMember(w http.ResponseWriter, r *http.Request) {
	var req memberRequest
	if e := decodeOctavia(r, "member", memberUpdateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusOK, "member", func() (map[string]any, string, *apiError) {
		m, p, lb, e := s.memberForChange(r)
		if e != nil {
			return nil, "", e
		}
		next := *m
		if e := applyMember(&next, req); e != nil {
			return nil, "", e
		}
		*m = next
		m.ProvisioningStatus, m.Updated, p.ProvisioningStatus = lbPendingUpdate, time.Now(), lbPendingUpdate
		s.markPoolParents(p, lb)
		return s.renderMember(m), lb.ID, nil
	})
}

func (s *Sim) deleteMember(w http.ResponseWriter, r *http.Request) {
	s.octaviaChange(w, http.StatusNoContent, "", func() (map[string]any, string, *apiError) {
		m, p, lb, e := s.memberForChange(r)
		if e != nil {
			return nil, "", e
		}
		m.ProvisioningStatus, p.ProvisioningStatus = lbPendingDelete, lbPendingUpdate
		s.markPoolParents(p, lb)
		return nil, lb.ID, nil
	})
}
