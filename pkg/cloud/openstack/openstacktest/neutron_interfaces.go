package openstacktest

import (
	"net/http"
	"net/netip"
	"slices"
	"time"
)

// routerInterface adds or removes a router interface named by subnet_id or port_id.
func (s *Sim) routerInterface(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			SubnetID string `json:"subnet_id"`
			PortID   string `json:"port_id"`
		}
		if !decodeOrFail(w, r, serviceNetwork, &req) {
			return
		}
		if (req.SubnetID == "") == (req.PortID == "") {
			writeError(w, serviceNetwork, neutronErr(400, "BadRequest", "Bad router request: Either subnet_id or port_id must be specified."))
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		rt := s.routerFor(w, r)
		if rt == nil {
			return
		}
		var p *Port
		var e *apiError
		if add {
			p, e = s.addInterface(rt, req.SubnetID, req.PortID)
		} else {
			p, e = s.removeInterface(rt, req.SubnetID, req.PortID)
		}
		if e != nil {
			writeError(w, serviceNetwork, e)
			return
		}
		rt.touch()
		sn := p.FixedIPs[0].SubnetID
		writeJSON(w, http.StatusOK, map[string]any{"id": rt.ID, "tenant_id": ProjectID, "project_id": ProjectID,
			"port_id": p.ID, "subnet_id": sn, "subnet_ids": []string{sn}, "network_id": p.NetworkID})
	}
}

// addInterface attaches a subnet (through a new port at its gateway address) or an existing
// port. Callers hold s.mu.
func (s *Sim) addInterface(rt *Router, subnetID, portID string) (*Port, *apiError) {
	bad := func(format string, args ...any) *apiError {
		return neutronErr(400, "BadRequest", "Bad router request: "+format, args...)
	}
	var sn *Subnet
	var p *Port
	if portID != "" {
		if p = s.st.ports[portID]; p == nil {
			return nil, neutronNotFound("port", portID)
		}
		if p.DeviceID != "" {
			return nil, neutronErr(409, "PortInUse", "Unable to complete operation on port %s for network %s. Port already has an attached device %s.", p.ID, p.NetworkID, p.DeviceID)
		}
		if len(p.FixedIPs) == 0 {
			return nil, bad("Router port must have at least one fixed IP.")
		}
		sn = s.st.subnets[p.FixedIPs[0].SubnetID]
	} else if sn = s.st.subnets[subnetID]; sn == nil {
		return nil, neutronNotFound("subnet", subnetID)
	}
	if sn.GatewayIP == "" && p == nil {
		return nil, bad("Subnet for router interface must have a gateway IP.")
	}
	for _, other := range s.routerPorts(rt.ID) {
		o := s.st.subnets[other.FixedIPs[0].SubnetID]
		if o.ID == sn.ID {
			return nil, bad("Router already has a port on subnet %s.", sn.ID)
		}
		if netip.MustParsePrefix(o.CIDR).Overlaps(netip.MustParsePrefix(sn.CIDR)) {
			return nil, bad("Cidr %s of subnet %s overlaps with cidr %s of subnet %s.", sn.CIDR, sn.ID, o.CIDR, o.ID)
		}
	}
	if p != nil {
		p.DeviceID, p.DeviceOwner, p.Updated = rt.ID, ownerRouterInterface, time.Now()
		p.Revision++
		return p, nil
	}
	if s.st.usedIPs[sn.ID+"/"+sn.GatewayIP] {
		return nil, neutronErr(409, "IpAddressInUse", "Unable to complete operation for network %s. The IP address %s is in use.", sn.NetworkID, sn.GatewayIP)
	}
	if len(s.st.ports) >= s.quotaLimit(serviceNetwork, "port") {
		return nil, overQuota("port")
	}
	return s.st.addInterfacePort(rt, sn), nil
}

// removeInterface deletes the interface port unless a floating IP needs it. Callers hold s.mu.
func (s *Sim) removeInterface(rt *Router, subnetID, portID string) (*Port, *apiError) {
	ports := s.routerPorts(rt.ID)
	i := slices.IndexFunc(ports, func(p *Port) bool { return p.ID == portID || p.FixedIPs[0].SubnetID == subnetID })
	if i < 0 && portID != "" {
		return nil, neutronErr(404, "RouterInterfaceNotFound", "Router %s does not have an interface with id %s", rt.ID, portID)
	}
	if i < 0 {
		return nil, neutronErr(404, "RouterInterfaceNotFoundForSubnet", "Router %s has no interface on subnet %s", rt.ID, subnetID)
	}
	p := ports[i]
	sn := p.FixedIPs[0].SubnetID
	for _, f := range s.st.fips {
		if fp := s.st.ports[f.PortID]; f.RouterID == rt.ID && fp != nil && slices.ContainsFunc(fp.FixedIPs, func(x FixedIP) bool { return x.SubnetID == sn }) {
			return nil, neutronErr(409, "RouterInterfaceInUseByFloatingIP", "Router interface for subnet %s on router %s cannot be deleted, as it is required by one or more floating IPs.", sn, rt.ID)
		}
	}
	snap := *p
	s.deletePortLocked(p)
	return &snap, nil
}

// routerBetween reaches an external network from a port's subnet: the router with a gateway on
// the network and an interface on the subnet. Callers hold s.mu.
func (s *Sim) routerBetween(externalID, subnetID string) *Router {
	for _, rt := range sortedBySeq(s.st.routers, func(r *Router) uint64 { return r.seq }) {
		if rt.GatewayNetworkID != externalID {
			continue
		}
		for _, p := range s.routerPorts(rt.ID) {
			if p.FixedIPs[0].SubnetID == subnetID {
				return rt
			}
		}
	}
	return nil
}
