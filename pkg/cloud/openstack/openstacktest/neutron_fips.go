package openstacktest

import (
	"encoding/json"
	"net/http"
	"time"
)

type floatingIPRequest struct {
	FloatingNetworkID string          `json:"floating_network_id"`
	PortID            json.RawMessage `json:"port_id"`
	FixedIPAddress    string          `json:"fixed_ip_address"`
	Description       *string         `json:"description"`
	SubnetID          string          `json:"subnet_id"`
	Tags              []string        `json:"tags"`
}

// attrs binds what a floating IP create or update may carry; choosing the address itself is
// admin-only in Neutron's default policy.
func (req *floatingIPRequest) attrs() attrs {
	into := func(dst any) func(json.RawMessage) error {
		return func(raw json.RawMessage) error { return json.Unmarshal(raw, dst) }
	}
	return attrs{
		"floating_network_id": {true, false, into(&req.FloatingNetworkID)},
		"port_id":             {true, true, func(raw json.RawMessage) error { req.PortID = raw; return nil }},
		"fixed_ip_address":    {true, true, nullableStr(&req.FixedIPAddress)},
		"description":         {true, true, into(&req.Description)}, "subnet_id": {true, false, into(&req.SubnetID)},
		"tags": {true, false, into(&req.Tags)}, "floating_ip_address": {true, false, policyRefused},
		"tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

// decodeFloatingIP reads and checks a floating IP body.
func decodeFloatingIP(r *http.Request, update bool) (floatingIPRequest, *apiError) {
	var req floatingIPRequest
	in, e := decodeNeutron(r, "floatingip")
	if e == nil {
		e = req.attrs().apply("floatingip", in, update)
	}
	return req, e
}

func (s *Sim) createFloatingIP(w http.ResponseWriter, r *http.Request) {
	req, e := decodeFloatingIP(r, false)
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	n, ok := st.networks[req.FloatingNetworkID]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("network", req.FloatingNetworkID))
		return
	}
	if !n.External || len(n.SubnetIDs) == 0 {
		writeError(w, serviceNetwork, neutronErr(400, "BadRequest", "Bad floatingip request: Network %s is not a valid external network.", n.ID))
		return
	}
	if len(st.fips) >= s.quotaLimit(serviceNetwork, "floatingip") {
		writeError(w, serviceNetwork, overQuota("floatingip"))
		return
	}
	sn := st.subnets[n.SubnetIDs[0]]
	if req.SubnetID != "" {
		if sn = st.subnets[req.SubnetID]; sn == nil || sn.NetworkID != n.ID {
			writeError(w, serviceNetwork, neutronErr(400, "BadRequest", "Bad floatingip request: subnet %s is not a subnet of network %s.", req.SubnetID, n.ID))
			return
		}
	}
	now := time.Now()
	fip := &FloatingIP{ID: newID(), NetworkID: n.ID, ProjectID: ProjectID, Description: deref(req.Description),
		Tags: append([]string{}, req.Tags...), Created: now, Updated: now, Revision: 1, seq: st.next()}
	if e := s.associate(fip, req.PortID, req.FixedIPAddress); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	addr, err := st.allocateIP(sn, "")
	if err != nil {
		writeError(w, serviceNetwork, neutronErr(409, "ExternalIpAddressExhausted", "Unable to find any IP address on external network %s.", n.ID))
		return
	}
	fip.Address, fip.floatingSubnetID = addr, sn.ID
	st.fips[fip.ID] = fip
	writeJSON(w, http.StatusCreated, map[string]any{"floatingip": s.renderFloatingIP(fip)})
}

// associate points fip at a port (a JSON string), or disassociates it (JSON null or absent
// on update). Callers hold s.mu.
func (s *Sim) associate(fip *FloatingIP, rawPort json.RawMessage, fixedIP string) *apiError {
	var portID *string
	if len(rawPort) > 0 {
		if err := json.Unmarshal(rawPort, &portID); err != nil {
			return neutronErr(400, "HTTPBadRequest", "Invalid input for port_id: %v", err)
		}
	}
	if portID == nil || *portID == "" {
		fip.PortID, fip.FixedIP, fip.RouterID = "", "", ""
		return nil
	}
	p, ok := s.st.ports[*portID]
	if !ok {
		return neutronNotFound("port", *portID)
	}
	if len(p.FixedIPs) == 0 {
		return neutronErr(400, "BadRequest", "Bad floatingip request: Port %s does not have any IPv4 address.", p.ID)
	}
	fixed := p.FixedIPs[0].IPAddress
	if fixedIP != "" {
		fixed = fixedIP
	}
	for _, other := range s.st.fips {
		if other != fip && other.PortID == p.ID && other.FixedIP == fixed {
			return neutronErr(409, "FloatingIPPortAlreadyAssociated", "Cannot associate floating IP %s with port %s using fixed IP %s, as that fixed IP already has a floating IP on external network %s.", fip.Address, p.ID, fixed, other.NetworkID)
		}
	}
	sub := p.FixedIPs[0].SubnetID
	for _, f := range p.FixedIPs {
		if f.IPAddress == fixed {
			sub = f.SubnetID
		}
	}
	rt := s.routerBetween(fip.NetworkID, sub)
	if rt == nil {
		return neutronErr(404, "ExternalGatewayForFloatingIPNotFound", "External network %s is not reachable from subnet %s.  Therefore, cannot associate Port %s with a Floating IP.", fip.NetworkID, sub, p.ID)
	}
	fip.PortID, fip.FixedIP, fip.RouterID = p.ID, fixed, rt.ID
	return nil
}

func (s *Sim) updateFloatingIP(w http.ResponseWriter, r *http.Request) {
	req, e := decodeFloatingIP(r, true)
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fip, ok := s.st.fips[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("floatingip", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, fip.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	// As the API reference says, a port_id that is null or absent disassociates.
	if e := s.associate(fip, req.PortID, req.FixedIPAddress); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if d := req.Description; d != nil {
		fip.Description = *d
	}
	fip.Updated = time.Now()
	fip.Revision++
	writeJSON(w, http.StatusOK, map[string]any{"floatingip": s.renderFloatingIP(fip)})
}

func (s *Sim) deleteFloatingIP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fip, ok := s.st.fips[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("floatingip", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, fip.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.st.releaseIP(fip.floatingSubnetID, fip.Address)
	delete(s.st.fips, fip.ID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) renderFloatingIP(f *FloatingIP) map[string]any {
	status := "DOWN"
	if f.PortID != "" {
		status = "ACTIVE"
	}
	m := map[string]any{
		"id": f.ID, "floating_network_id": f.NetworkID, "floating_ip_address": f.Address, "status": status,
		"port_id": nil, "fixed_ip_address": nil, "router_id": nil, "description": f.Description,
		"tenant_id": f.ProjectID, "project_id": f.ProjectID, "tags": append([]string{}, f.Tags...),
		"revision_number": f.Revision, "created_at": ts(f.Created), "updated_at": ts(f.Updated)}
	if f.PortID != "" {
		m["port_id"], m["fixed_ip_address"], m["router_id"] = f.PortID, f.FixedIP, f.RouterID
	}
	return m
}

func (s *Sim) renderFloatingIPs() []map[string]any {
	var out []map[string]any
	for _, f := range sortedBySeq(s.st.fips, func(f *FloatingIP) uint64 { return f.seq }) {
		out = append(out, s.renderFloatingIP(f))
	}
	return out
}
