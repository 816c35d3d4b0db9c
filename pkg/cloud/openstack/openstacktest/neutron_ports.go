package openstacktest

import (
	"encoding/json"
	"fmt"
	"net"
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
	NetworkID           string           `json:"network_id"`
	Name                *string          `json:"name"`
	Description         *string          `json:"description"`
	FixedIPs            []fixedIPRequest `json:"fixed_ips"`
	SecurityGroups      *[]string        `json:"security_groups"`
	DeviceID            *string          `json:"device_id"`
	DeviceOwner         *string          `json:"device_owner"`
	Tags                []string         `json:"tags"`
	AdminStateUp        *bool            `json:"admin_state_up"`
	PortSecurity        *bool            `json:"port_security_enabled"`
	AllowedAddressPairs *[]AddressPair   `json:"allowed_address_pairs"`
	MACAddress          string           `json:"mac_address"`
}

// attrs binds the attributes a port create or update may carry. Changing the fixed IPs of an
// existing port is not simulated, so an update naming them is refused.
func (req *portRequest) attrs() attrs {
	into := func(dst any) func(json.RawMessage) error {
		return func(raw json.RawMessage) error { return json.Unmarshal(raw, dst) }
	}
	return attrs{
		"network_id": {true, false, into(&req.NetworkID)}, "name": {true, true, into(&req.Name)},
		"description": {true, true, into(&req.Description)}, "fixed_ips": {true, false, into(&req.FixedIPs)},
		"security_groups": {true, true, into(&req.SecurityGroups)}, "device_id": {true, true, into(&req.DeviceID)},
		"device_owner": {true, true, into(&req.DeviceOwner)}, "tags": {true, false, into(&req.Tags)},
		"admin_state_up": {true, true, into(&req.AdminStateUp)}, "port_security_enabled": {true, true, into(&req.PortSecurity)},
		"allowed_address_pairs": {true, true, into(&req.AllowedAddressPairs)}, "mac_address": {true, false, into(&req.MACAddress)},
		"binding:vnic_type": {true, true, func(raw json.RawMessage) error {
			var v string
			if err := json.Unmarshal(raw, &v); err != nil || v != "normal" {
				return fmt.Errorf("the simulator binds ports with vnic_type normal only, not %s", raw)
			}
			return nil
		}},
		"tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

// checkPortSecurity enforces Neutron's rule that security groups and address pairs need port
// security.
func checkPortSecurity(p *Port) *apiError {
	if p.PortSecurity {
		return nil
	}
	if len(p.SecurityGroupIDs) > 0 {
		return neutronErr(409, "PortSecurityAndIPRequiredForSecurityGroups", "Port security must be enabled and port must have an IP address in order to use security groups.")
	}
	if len(p.AllowedAddressPairs) > 0 {
		return neutronErr(409, "AddressPairAndPortSecurityRequired", "Port Security must be enabled in order to have allowed address pairs on a port.")
	}
	return nil
}

func checkAddressPairs(pairs []AddressPair) *apiError {
	for _, ap := range pairs {
		if _, err := netip.ParseAddr(ap.IPAddress); err != nil {
			if _, err := netip.ParsePrefix(ap.IPAddress); err != nil {
				return neutronErr(400, "HTTPBadRequest", "Invalid input for allowed_address_pairs. Reason: '%s' is not a valid IP address.", ap.IPAddress)
			}
		}
		if ap.MACAddress != "" {
			if _, err := net.ParseMAC(ap.MACAddress); err != nil {
				return neutronErr(400, "HTTPBadRequest", "Invalid input for allowed_address_pairs. Reason: '%s' is not a valid MAC address.", ap.MACAddress)
			}
		}
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Sim) createPort(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "port")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	var req portRequest
	if e := req.attrs().apply("port", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, e := s.newPort(req)
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
	portSecurity := n.PortSecurity
	if req.PortSecurity != nil {
		portSecurity = *req.PortSecurity
	}
	var pairs []AddressPair
	if req.AllowedAddressPairs != nil {
		pairs = *req.AllowedAddressPairs
	}
	if e := checkAddressPairs(pairs); e != nil {
		return nil, e
	}
	mac := req.MACAddress
	if _, err := net.ParseMAC(mac); mac != "" && err != nil {
		return nil, neutronErr(400, "HTTPBadRequest", "Invalid input for mac_address. Reason: '%s' is not a valid MAC address.", mac)
	}
	for _, p := range st.ports {
		if mac != "" && p.NetworkID == n.ID && p.MACAddress == mac {
			return nil, neutronErr(409, "MacAddressInUse", "Unable to complete operation for network %s. The mac address %s is in use.", n.ID, mac)
		}
	}
	var sgIDs []string
	if req.SecurityGroups == nil && portSecurity {
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
	probe := &Port{PortSecurity: portSecurity, SecurityGroupIDs: sgIDs, AllowedAddressPairs: pairs}
	if e := checkPortSecurity(probe); e != nil {
		return nil, e
	}
	if len(st.ports) >= s.quotaLimit(serviceNetwork, "port") {
		return nil, overQuota("port")
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
		Revision: 1, seq: seq, AdminStateUp: req.AdminStateUp == nil || *req.AdminStateUp,
		PortSecurity: portSecurity, AllowedAddressPairs: pairs, MACAddress: mac}
	if p.MACAddress == "" {
		p.MACAddress = macOf(seq)
	}
	if p.Tags == nil {
		p.Tags = []string{}
	}
	st.ports[p.ID] = p
	return p, nil
}

// macOf is the MAC address Neutron would give the port made at seq (its base is fa:16:3e).
func macOf(seq uint64) string {
	return fmt.Sprintf("fa:16:3e:%02x:%02x:%02x", byte(seq>>16), byte(seq>>8), byte(seq))
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
	in, e := decodeNeutron(r, "port")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	var u portRequest
	if e := u.attrs().apply("port", in, true); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.st.ports[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("port", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, p.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	c := *p
	if u.SecurityGroups != nil {
		for _, id := range *u.SecurityGroups {
			if _, ok := s.st.secgroups[id]; !ok {
				writeError(w, serviceNetwork, neutronNotFound("security_group", id))
				return
			}
		}
		c.SecurityGroupIDs = slices.Clone(*u.SecurityGroups)
	}
	if u.AllowedAddressPairs != nil {
		if e := checkAddressPairs(*u.AllowedAddressPairs); e != nil {
			writeError(w, serviceNetwork, e)
			return
		}
		c.AllowedAddressPairs = slices.Clone(*u.AllowedAddressPairs)
	}
	for dst, src := range map[*string]*string{&c.Name: u.Name, &c.Description: u.Description,
		&c.DeviceID: u.DeviceID, &c.DeviceOwner: u.DeviceOwner} {
		if src != nil {
			*dst = *src
		}
	}
	for dst, src := range map[*bool]*bool{&c.AdminStateUp: u.AdminStateUp, &c.PortSecurity: u.PortSecurity} {
		if src != nil {
			*dst = *src
		}
	}
	if e := checkPortSecurity(&c); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	c.Updated = time.Now()
	c.Revision++
	*p = c
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
	if e := checkIfMatch(r, p.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if p.DeviceOwner == ownerRouterInterface || p.DeviceOwner == ownerRouterGateway {
		writeError(w, serviceNetwork, neutronErr(409, "L3PortInUse", "Port %s cannot be deleted directly via the port API: has device owner %s.", p.ID, p.DeviceOwner))
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
	if srv := s.st.servers[p.DeviceID]; srv != nil && srv.Status == "ACTIVE" || p.DeviceOwner == ownerRouterInterface {
		status = "ACTIVE"
	}
	fixed := []any{}
	for _, f := range p.FixedIPs {
		fixed = append(fixed, map[string]any{"subnet_id": f.SubnetID, "ip_address": f.IPAddress})
	}
	pairs := []any{}
	for _, ap := range p.AllowedAddressPairs {
		mac := ap.MACAddress
		if mac == "" {
			mac = p.MACAddress // Neutron fills in the port's own MAC
		}
		pairs = append(pairs, map[string]any{"ip_address": ap.IPAddress, "mac_address": mac})
	}
	return map[string]any{
		"id": p.ID, "name": p.Name, "description": p.Description, "network_id": p.NetworkID,
		"tenant_id": p.ProjectID, "project_id": p.ProjectID, "mac_address": p.MACAddress,
		"fixed_ips": fixed, "device_id": p.DeviceID, "device_owner": p.DeviceOwner, "status": status,
		"admin_state_up": p.AdminStateUp, "security_groups": append([]string{}, p.SecurityGroupIDs...),
		"allowed_address_pairs": pairs, "tags": append([]string{}, p.Tags...), "revision_number": p.Revision,
		"binding:vnic_type": "normal", "port_security_enabled": p.PortSecurity,
		"created_at": ts(p.Created), "updated_at": ts(p.Updated)}
}

func (s *Sim) renderPorts() []map[string]any {
	var out []map[string]any
	for _, p := range sortedBySeq(s.st.ports, func(p *Port) uint64 { return p.seq }) {
		out = append(out, s.renderPort(p))
	}
	return out
}
