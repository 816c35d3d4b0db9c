package openstacktest

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"time"
)

type fixedIPRequest struct {
	SubnetID  string `json:"subnet_id,omitempty"`
	IPAddress string `json:"ip_address,omitempty"`
}

type portRequest struct {
	NetworkID      string           `json:"network_id"`
	Name           *string          `json:"name"`
	Description    *string          `json:"description"`
	FixedIPs       []fixedIPRequest `json:"fixed_ips"`
	SecurityGroups *[]string        `json:"security_groups"`
	DeviceID       *string          `json:"device_id"`
	DeviceOwner    *string          `json:"device_owner"`
	Tags           []string         `json:"tags"`
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Sim) createPort(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Port portRequest `json:"port"`
	}
	if !decodeOrFail(w, r, serviceNetwork, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, e := s.newPort(body.Port)
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"port": s.renderPort(p)})
}

// newPort validates and records a port. Callers hold s.mu.
func (s *Sim) newPort(req portRequest) (*Port, *apiError) {
	st := s.st
	n, ok := st.networks[req.NetworkID]
	if !ok {
		return nil, neutronNotFound("network", req.NetworkID)
	}
	var sgIDs []string
	if req.SecurityGroups == nil {
		if g := s.secGroupByRef("default"); g != nil {
			sgIDs = []string{g.ID}
		}
	}
	for _, id := range deref2(req.SecurityGroups) {
		if _, ok := st.secgroups[id]; !ok {
			return nil, neutronNotFound("security_group", id)
		}
		sgIDs = append(sgIDs, id)
	}
	if q := st.quota.Ports; q > 0 && len(st.ports) >= q {
		return nil, neutronErr(409, "OverQuota", "Quota exceeded for resources: ['port'].")
	}
	wants := req.FixedIPs
	if len(wants) == 0 {
		if len(n.SubnetIDs) == 0 {
			return nil, neutronErr(400, "HTTPBadRequest", "network %s has no subnet", n.ID)
		}
		wants = []fixedIPRequest{{SubnetID: n.SubnetIDs[0]}}
	}
	var fixed []FixedIP
	undo := func() {
		for _, f := range fixed {
			st.releaseIP(f.SubnetID, f.IPAddress)
		}
	}
	for _, want := range wants {
		sn, e := s.subnetFor(n, want)
		if e != nil {
			undo()
			return nil, e
		}
		ip, err := st.allocateIP(sn, want.IPAddress)
		if err != nil {
			undo()
			if err == errIPInUse {
				return nil, neutronErr(409, "IpAddressAlreadyAllocated", "IP address %s already allocated in subnet %s", want.IPAddress, sn.ID)
			}
			return nil, neutronErr(409, "IpAddressGenerationFailure", "No more IP addresses available on network %s.", n.ID)
		}
		fixed = append(fixed, FixedIP{SubnetID: sn.ID, IPAddress: ip})
	}
	now := time.Now()
	seq := st.next()
	p := &Port{ID: newID(), Name: deref(req.Name), Description: deref(req.Description), NetworkID: n.ID,
		ProjectID: ProjectID, FixedIPs: fixed, SecurityGroupIDs: sgIDs, DeviceID: deref(req.DeviceID),
		DeviceOwner: deref(req.DeviceOwner), Tags: slices.Clone(req.Tags), Created: now, Updated: now,
		Revision: 1, seq: seq,
		MACAddress: fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", byte(seq>>16), byte(seq>>8), byte(seq))}
	st.ports[p.ID] = p
	return p, nil
}

func deref2(p *[]string) []string {
	if p == nil {
		return nil
	}
	return *p
}

// subnetFor finds the subnet a fixed-IP request names, directly or by its address.
func (s *Sim) subnetFor(n *Network, want fixedIPRequest) (*Subnet, *apiError) {
	if want.SubnetID != "" {
		sn, ok := s.st.subnets[want.SubnetID]
		if !ok {
			return nil, neutronNotFound("subnet", want.SubnetID)
		}
		if sn.NetworkID != n.ID {
			return nil, neutronErr(400, "InvalidInput", "Invalid input for operation: Failed to create port on network %s, because fixed_ips included invalid subnet %s.", n.ID, sn.ID)
		}
		return sn, nil
	}
	a, err := netip.ParseAddr(want.IPAddress)
	if err != nil {
		return nil, neutronErr(400, "InvalidInput", "Invalid input for operation: %q is not a valid IP address.", want.IPAddress)
	}
	for _, id := range n.SubnetIDs {
		if sn := s.st.subnets[id]; netip.MustParsePrefix(sn.CIDR).Contains(a) {
			return sn, nil
		}
	}
	return nil, neutronErr(400, "InvalidInput", "Invalid input for operation: IP address %s is not a valid IP for any subnet on network %s.", want.IPAddress, n.ID)
}

func (s *Sim) updatePort(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Port portRequest `json:"port"`
	}
	if !decodeOrFail(w, r, serviceNetwork, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.st.ports[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("port", r.PathValue("id")))
		return
	}
	u := body.Port
	if u.SecurityGroups != nil {
		for _, id := range *u.SecurityGroups {
			if _, ok := s.st.secgroups[id]; !ok {
				writeError(w, serviceNetwork, neutronNotFound("security_group", id))
				return
			}
		}
		p.SecurityGroupIDs = slices.Clone(*u.SecurityGroups)
	}
	for dst, src := range map[*string]*string{&p.Name: u.Name, &p.Description: u.Description,
		&p.DeviceID: u.DeviceID, &p.DeviceOwner: u.DeviceOwner} {
		if src != nil {
			*dst = *src
		}
	}
	p.Updated = time.Now()
	p.Revision++
	writeJSON(w, http.StatusOK, map[string]any{"port": s.renderPort(p)})
}

func (s *Sim) deletePort(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.st.ports[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("port", r.PathValue("id")))
		return
	}
	s.deletePortLocked(p)
	w.WriteHeader(http.StatusNoContent)
}

// deletePortLocked frees a port's addresses, disassociates its floating IPs and detaches it from
// its server. Callers hold s.mu.
func (s *Sim) deletePortLocked(p *Port) {
	for _, f := range p.FixedIPs {
		s.st.releaseIP(f.SubnetID, f.IPAddress)
	}
	for _, fip := range s.st.fips {
		if fip.PortID == p.ID {
			fip.PortID, fip.FixedIP, fip.RouterID, fip.Updated = "", "", "", time.Now()
		}
	}
	if srv := s.st.servers[p.DeviceID]; srv != nil {
		srv.PortIDs = slices.DeleteFunc(srv.PortIDs, func(id string) bool { return id == p.ID })
	}
	delete(s.st.ports, p.ID)
}

func (s *Sim) renderPort(p *Port) map[string]any {
	status := "DOWN"
	if srv := s.st.servers[p.DeviceID]; srv != nil && srv.Status == "ACTIVE" {
		status = "ACTIVE"
	}
	fixed := []any{}
	for _, f := range p.FixedIPs {
		fixed = append(fixed, map[string]any{"subnet_id": f.SubnetID, "ip_address": f.IPAddress})
	}
	return map[string]any{
		"id": p.ID, "name": p.Name, "description": p.Description, "network_id": p.NetworkID,
		"tenant_id": p.ProjectID, "project_id": p.ProjectID, "mac_address": p.MACAddress,
		"fixed_ips": fixed, "device_id": p.DeviceID, "device_owner": p.DeviceOwner, "status": status,
		"admin_state_up": true, "security_groups": append([]string{}, p.SecurityGroupIDs...),
		"allowed_address_pairs": []any{}, "tags": append([]string{}, p.Tags...), "revision_number": p.Revision,
		"binding:vnic_type": "normal", "port_security_enabled": true,
		"created_at": ts(p.Created), "updated_at": ts(p.Updated)}
}

func (s *Sim) renderPorts() []map[string]any {
	var out []map[string]any
	for _, p := range sortedBySeq(s.st.ports, func(p *Port) uint64 { return p.seq }) {
		out = append(out, s.renderPort(p))
	}
	return out
}
