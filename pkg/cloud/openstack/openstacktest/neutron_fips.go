package openstacktest

import (
	"encoding/json"
	"net/http"
	"time"
)

// routerID is the one router that connects every internal network to the external ones.
const routerID = "5a7b9c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d"

type floatingIPRequest struct {
	FloatingNetworkID string          `json:"floating_network_id"`
	PortID            json.RawMessage `json:"port_id"`
	FixedIPAddress    string          `json:"fixed_ip_address"`
	Description       *string         `json:"description"`
}

func (s *Sim) createFloatingIP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		FloatingIP floatingIPRequest `json:"floatingip"`
	}
	if !decodeOrFail(w, r, serviceNetwork, &body) {
		return
	}
	req := body.FloatingIP
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
	if q := st.quota.FloatingIPs; q > 0 && len(st.fips) >= q {
		writeError(w, serviceNetwork, neutronErr(409, "OverQuota", "Quota exceeded for resources: ['floatingip']."))
		return
	}
	now := time.Now()
	fip := &FloatingIP{ID: newID(), NetworkID: n.ID, ProjectID: ProjectID, Description: deref(req.Description),
		Created: now, Updated: now, Revision: 1, seq: st.next()}
	if e := s.associate(fip, req.PortID, req.FixedIPAddress); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	sn := st.subnets[n.SubnetIDs[0]]
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
	fip.PortID, fip.FixedIP, fip.RouterID = p.ID, fixed, routerID
	return nil
}

func (s *Sim) updateFloatingIP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		FloatingIP floatingIPRequest `json:"floatingip"`
	}
	if !decodeOrFail(w, r, serviceNetwork, &body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fip, ok := s.st.fips[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("floatingip", r.PathValue("id")))
		return
	}
	if e := s.associate(fip, body.FloatingIP.PortID, body.FloatingIP.FixedIPAddress); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if d := body.FloatingIP.Description; d != nil {
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
