package openstacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
)

func (s *Sim) subnetRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+neutronBase+"/subnets", s.createSubnet)
	mux.HandleFunc("PUT "+neutronBase+"/subnets/{id}", s.updateSubnet)
	mux.HandleFunc("DELETE "+neutronBase+"/subnets/{id}", s.deleteSubnet)
}

// subnetSpec holds what a create names but the subnet does not store as such.
type subnetSpec struct {
	ipVersion  int
	gatewaySet bool
	poolsSet   bool
	pool       string // subnetpool_id, which must be null
}

func (sn *Subnet) attrs(spec *subnetSpec) attrs {
	return attrs{
		"name": {true, true, str(&sn.Name)}, "description": {true, true, str(&sn.Description)},
		"network_id": {true, false, str(&sn.NetworkID)}, "cidr": {true, false, str(&sn.CIDR)},
		"ip_version":  {true, false, func(raw json.RawMessage) error { return json.Unmarshal(raw, &spec.ipVersion) }},
		"enable_dhcp": {true, true, boolean(&sn.EnableDHCP)},
		"gateway_ip": {true, true, func(raw json.RawMessage) error {
			spec.gatewaySet = true
			return nullableStr(&sn.GatewayIP)(raw)
		}},
		"dns_nameservers": {true, true, strs(&sn.DNSNameservers)},
		"allocation_pools": {true, true, func(raw json.RawMessage) error {
			spec.poolsSet = true
			return json.Unmarshal(raw, &sn.AllocationPools)
		}},
		"host_routes":   {true, true, func(raw json.RawMessage) error { return json.Unmarshal(raw, &sn.HostRoutes) }},
		"subnetpool_id": {true, false, nullableStr(&spec.pool)},
		"tags":          {true, false, strs(&sn.Tags)}, "tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

// validate checks a subnet as Neutron does and fills the defaults of a new one.
func (sn *Subnet) validate(spec *subnetSpec, create bool) error {
	p, err := netip.ParsePrefix(sn.CIDR)
	if err != nil || !p.Addr().Is4() {
		return fmt.Errorf("'%s' is not a valid IPv4 subnet (the simulator serves IPv4 only)", sn.CIDR)
	}
	if p.Masked() != p {
		return fmt.Errorf("'%s' isn't a recognized IP subnet cidr, '%s' is recommended", sn.CIDR, p.Masked())
	}
	if create && spec.ipVersion != 4 {
		return fmt.Errorf("ip_version %d is not supported: the simulator serves IPv4 only", spec.ipVersion)
	}
	if spec.pool != "" {
		return fmt.Errorf("subnet pools are not served by the simulator")
	}
	if create && !spec.gatewaySet && p.Bits() < 31 {
		sn.GatewayIP = p.Addr().Next().String()
	}
	if sn.GatewayIP != "" {
		if a, err := netip.ParseAddr(sn.GatewayIP); err != nil || !p.Contains(a) {
			return fmt.Errorf("gateway IP %s is not in subnet %s", sn.GatewayIP, sn.CIDR)
		}
	}
	if create && !spec.poolsSet {
		sn.AllocationPools = defaultPools(p, sn.GatewayIP)
	}
	for _, r := range sn.AllocationPools {
		a, errA := netip.ParseAddr(r.Start)
		b, errB := netip.ParseAddr(r.End)
		if errA != nil || errB != nil || !p.Contains(a) || !p.Contains(b) || b.Less(a) {
			return fmt.Errorf("the allocation pool %s-%s spans beyond the subnet cidr %s", r.Start, r.End, sn.CIDR)
		}
		if g, err := netip.ParseAddr(sn.GatewayIP); err == nil && !g.Less(a) && !b.Less(g) {
			return fmt.Errorf("gateway ip %s conflicts with allocation pool %s-%s", sn.GatewayIP, r.Start, r.End)
		}
	}
	for i, ns := range sn.DNSNameservers {
		if _, err := netip.ParseAddr(ns); err != nil {
			return fmt.Errorf("'%s' is not a valid nameserver", ns)
		}
		if slices.Contains(sn.DNSNameservers[:i], ns) {
			return fmt.Errorf("duplicate nameserver '%s'", ns)
		}
	}
	for _, hr := range sn.HostRoutes {
		if _, err := netip.ParsePrefix(hr.Destination); err != nil {
			return fmt.Errorf("invalid host route destination %q", hr.Destination)
		}
		if _, err := netip.ParseAddr(hr.NextHop); err != nil {
			return fmt.Errorf("invalid host route nexthop %q", hr.NextHop)
		}
	}
	return nil
}

// defaultPools is every host address but the gateway, as Neutron allocates by default.
func defaultPools(p netip.Prefix, gateway string) []IPRange {
	first, last := p.Addr().Next(), p.Addr()
	for a := p.Addr(); p.Contains(a); a = a.Next() {
		last = a
	}
	last = last.Prev() // broadcast
	if !first.IsValid() || last.Less(first) {
		return []IPRange{}
	}
	g, err := netip.ParseAddr(gateway)
	if err != nil || g.Less(first) || last.Less(g) {
		return []IPRange{{first.String(), last.String()}}
	}
	var out []IPRange
	if first.Less(g) {
		out = append(out, IPRange{first.String(), g.Prev().String()})
	}
	if g.Less(last) {
		out = append(out, IPRange{g.Next().String(), last.String()})
	}
	return out
}

func (s *Sim) createSubnet(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "subnet")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	sn := &Subnet{ID: newID(), EnableDHCP: true, DNSNameservers: []string{}, HostRoutes: []HostRoute{}, neutronStd: newStd("")}
	spec := &subnetSpec{}
	if e := sn.attrs(spec).apply("subnet", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if err := sn.validate(spec, true); err != nil {
		writeError(w, serviceNetwork, neutronErr(400, "HTTPBadRequest", "Invalid input for operation: %v.", err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.st.networks[sn.NetworkID]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("network", sn.NetworkID))
		return
	}
	if len(s.st.subnets) >= s.quotaLimit(serviceNetwork, "subnet") {
		writeError(w, serviceNetwork, overQuota("subnet"))
		return
	}
	p := netip.MustParsePrefix(sn.CIDR)
	for _, id := range n.SubnetIDs {
		if other := netip.MustParsePrefix(s.st.subnets[id].CIDR); other.Overlaps(p) {
			writeError(w, serviceNetwork, neutronErr(400, "InvalidInput", "Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", sn.CIDR, n.ID))
			return
		}
	}
	sn.seq = s.st.next()
	s.st.subnets[sn.ID] = sn
	n.SubnetIDs = append(n.SubnetIDs, sn.ID)
	n.touch()
	writeJSON(w, http.StatusCreated, map[string]any{"subnet": renderSubnet(sn)})
}

func (s *Sim) updateSubnet(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "subnet")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.st.subnets[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("subnet", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, sn.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	c := *sn
	spec := &subnetSpec{}
	if e := c.attrs(spec).apply("subnet", in, true); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if err := c.validate(spec, false); err != nil {
		writeError(w, serviceNetwork, neutronErr(400, "HTTPBadRequest", "Invalid input for operation: %v.", err))
		return
	}
	if c.GatewayIP != sn.GatewayIP && c.GatewayIP != "" && s.st.usedIPs[sn.ID+"/"+c.GatewayIP] {
		writeError(w, serviceNetwork, neutronErr(409, "GatewayIpInUse", "Current gateway ip %s already in use by port. Unable to update.", c.GatewayIP))
		return
	}
	c.touch()
	*sn = c
	writeJSON(w, http.StatusOK, map[string]any{"subnet": renderSubnet(sn)})
}

func (s *Sim) deleteSubnet(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.st.subnets[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("subnet", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, sn.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	for key := range s.st.usedIPs {
		if len(key) > len(sn.ID) && key[:len(sn.ID)+1] == sn.ID+"/" {
			writeError(w, serviceNetwork, neutronErr(409, "SubnetInUse", "Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", sn.ID))
			return
		}
	}
	delete(s.st.subnets, sn.ID)
	if n := s.st.networks[sn.NetworkID]; n != nil {
		n.SubnetIDs = slices.DeleteFunc(n.SubnetIDs, func(id string) bool { return id == sn.ID })
		n.touch()
	}
	w.WriteHeader(http.StatusNoContent)
}

func renderSubnet(sn *Subnet) map[string]any {
	pools, routes := []any{}, []any{}
	for _, p := range sn.AllocationPools {
		pools = append(pools, map[string]any{"start": p.Start, "end": p.End})
	}
	for _, r := range sn.HostRoutes {
		routes = append(routes, map[string]any{"destination": r.Destination, "nexthop": r.NextHop})
	}
	return sn.render(map[string]any{
		"id": sn.ID, "name": sn.Name, "network_id": sn.NetworkID, "cidr": sn.CIDR, "ip_version": 4,
		"gateway_ip": nullable(sn.GatewayIP), "enable_dhcp": sn.EnableDHCP,
		"dns_nameservers": append([]string{}, sn.DNSNameservers...), "allocation_pools": pools,
		"host_routes": routes, "ipv6_address_mode": nil, "ipv6_ra_mode": nil, "subnetpool_id": nil,
		"service_types": []string{}})
}

func (s *Sim) renderSubnets() []map[string]any {
	var out []map[string]any
	for _, sn := range sortedBySeq(s.st.subnets, func(n *Subnet) uint64 { return n.seq }) {
		out = append(out, renderSubnet(sn))
	}
	return out
}
