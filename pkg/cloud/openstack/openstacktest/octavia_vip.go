package openstacktest

import (
	"net/netip"
	"slices"
)

type vipChoice struct {
	networkID, subnetID string
	port                *Port
}

// vipFor finds where the VIP goes: the port, network or subnet the request names, in that
// order of precedence, as Octavia's VIP validation does. Callers hold s.mu.
func (s *Sim) vipFor(req lbRequest) (vipChoice, *apiError) {
	st := s.st
	if req.VIPPortID != "" {
		p, ok := st.ports[req.VIPPortID]
		if !ok {
			return vipChoice{}, errf(400, "Port %s not found.", req.VIPPortID)
		}
		if p.DeviceID != "" {
			return vipChoice{}, errf(400, "Validation failure: Port %s already in use by device %s.", p.ID, p.DeviceID)
		}
		c := vipChoice{networkID: p.NetworkID, port: p, subnetID: req.VIPSubnetID}
		switch {
		case c.subnetID != "":
			if _, ok := st.subnets[c.subnetID]; !ok {
				return vipChoice{}, errf(400, "Subnet %s not found.", c.subnetID)
			}
		case req.VIPAddress != "":
			for _, f := range p.FixedIPs {
				if f.IPAddress == req.VIPAddress {
					c.subnetID = f.SubnetID
				}
			}
			if c.subnetID == "" {
				return vipChoice{}, errf(400, "Validation failure: Specified VIP address not found on the specified VIP port.")
			}
		case len(p.FixedIPs) == 1:
			c.subnetID = p.FixedIPs[0].SubnetID
		default:
			return vipChoice{}, errf(400, "Validation failure: VIP port's subnet could not be determined. Please specify either a VIP subnet or address.")
		}
		return c, nil
	}
	if req.VIPNetworkID != "" {
		n, ok := st.networks[req.VIPNetworkID]
		if !ok {
			return vipChoice{}, errf(400, "Network %s not found.", req.VIPNetworkID)
		}
		c := vipChoice{networkID: n.ID, subnetID: req.VIPSubnetID}
		if c.subnetID != "" {
			if !slices.Contains(n.SubnetIDs, c.subnetID) {
				return vipChoice{}, errf(400, "Subnet %s not found.", c.subnetID)
			}
			return c, nil
		}
		for _, id := range n.SubnetIDs {
			p, err := netip.ParsePrefix(st.subnets[id].CIDR)
			if err != nil {
				continue
			}
			if req.VIPAddress != "" {
				if a, err := netip.ParseAddr(req.VIPAddress); err == nil && p.Contains(a) {
					c.subnetID = id
					break
				}
				continue
			}
			if c.subnetID == "" {
				c.subnetID = id // the first subnet, unless there is an IPv4 one
			}
			if p.Addr().Is4() {
				c.subnetID = id
				break
			}
		}
		switch {
		case c.subnetID == "" && req.VIPAddress != "":
			return vipChoice{}, errf(400, "Validation failure: Supplied network does not contain a subnet for VIP address specified.")
		case c.subnetID == "":
			return vipChoice{}, errf(400, "Validation failure: Supplied network does not contain a subnet.")
		}
		return c, nil
	}
	if req.VIPSubnetID != "" {
		sn, ok := st.subnets[req.VIPSubnetID]
		if !ok {
			return vipChoice{}, errf(400, "Subnet %s not found.", req.VIPSubnetID)
		}
		return vipChoice{networkID: sn.NetworkID, subnetID: sn.ID}, nil
	}
	return vipChoice{}, errf(400, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
}
