package openstacktest

import (
	"maps"
	"slices"
)

// LoadBalancers returns every load balancer, including those being deleted, each with its
// listeners and pools, and each pool with its members and health monitor.
func (s *Sim) LoadBalancers() []LoadBalancer {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.st.octavia
	var out []LoadBalancer
	for _, lb := range sortedBySeq(o.lbs, func(v *LoadBalancer) uint64 { return v.seq }) {
		c := *lb
		c.Tags, c.Listeners, c.Pools = slices.Clone(lb.Tags), nil, nil
		for _, l := range sortedBySeq(o.listeners, func(v *Listener) uint64 { return v.seq }) {
			if l.LoadBalancerID == lb.ID {
				lc := *l
				lc.AllowedCIDRs, lc.InsertHeaders, lc.Tags = slices.Clone(l.AllowedCIDRs), maps.Clone(l.InsertHeaders), slices.Clone(l.Tags)
				c.Listeners = append(c.Listeners, lc)
			}
		}
		for _, p := range sortedBySeq(o.pools, func(v *Pool) uint64 { return v.seq }) {
			if p.LoadBalancerID == lb.ID {
				c.Pools = append(c.Pools, s.copyPool(p))
			}
		}
		out = append(out, c)
	}
	return out
}

// copyPool copies a pool with its members and health monitor. Callers hold s.mu.
func (s *Sim) copyPool(p *Pool) Pool {
	o := s.st.octavia
	c := *p
	c.Tags, c.SessionPersistence, c.Members, c.Monitor = slices.Clone(p.Tags), maps.Clone(p.SessionPersistence), nil, nil
	for _, m := range sortedBySeq(o.members, func(v *Member) uint64 { return v.seq }) {
		if m.PoolID == p.ID {
			mc := *m
			mc.Tags = slices.Clone(m.Tags)
			c.Members = append(c.Members, mc)
		}
	}
	if hm, ok := o.monitors[s.monitorOf(p.ID)]; ok {
		hc := *hm
		hc.Tags = slices.Clone(hm.Tags)
		c.Monitor = &hc
	}
	return c
}

// loadBalancerTopology is what the data plane runs of the load balancers: every one not being
// deleted, with the listeners, members and monitors not being deleted. A member serves only
// when it and its pool are administratively up. Callers hold s.mu.
func (s *Sim) loadBalancerTopology() []LoadBalancerInfo {
	o := s.st.octavia
	var out []LoadBalancerInfo
	for _, lb := range sortedBySeq(o.lbs, func(v *LoadBalancer) uint64 { return v.seq }) {
		if lb.ProvisioningStatus == lbPendingDelete {
			continue
		}
		info := LoadBalancerInfo{ID: lb.ID, Name: lb.Name, VIP: lb.VIPAddress, VIPPortID: lb.VIPPortID, AdminUp: lb.AdminStateUp}
		if n, ok := s.st.networks[lb.VIPNetworkID]; ok {
			info.Network = NetworkInfo{ID: n.ID, Name: n.Name, External: n.External}
		}
		if sn, ok := s.st.subnets[lb.VIPSubnetID]; ok {
			info.Network.CIDR, info.Network.Gateway = sn.CIDR, sn.GatewayIP
		}
		for _, l := range sortedBySeq(o.listeners, func(v *Listener) uint64 { return v.seq }) {
			if l.LoadBalancerID != lb.ID || l.ProvisioningStatus == lbPendingDelete {
				continue
			}
			info.Listeners = append(info.Listeners, s.listenerInfo(l))
		}
		out = append(out, info)
	}
	return out
}

// listenerInfo describes a listener with its default pool for the data plane. Callers hold s.mu.
func (s *Sim) listenerInfo(l *Listener) ListenerInfo {
	o := s.st.octavia
	li := ListenerInfo{ID: l.ID, Protocol: l.Protocol, Port: l.ProtocolPort,
		AllowedCIDRs: slices.Clone(l.AllowedCIDRs), AdminUp: l.AdminStateUp}
	p, ok := o.pools[l.DefaultPoolID]
	if !ok || p.ProvisioningStatus == lbPendingDelete {
		return li
	}
	li.Method = p.LBAlgorithm
	for _, m := range sortedBySeq(o.members, func(v *Member) uint64 { return v.seq }) {
		if m.PoolID == p.ID && m.ProvisioningStatus != lbPendingDelete {
			li.Members = append(li.Members, MemberInfo{ID: m.ID, Address: m.Address, Port: m.ProtocolPort,
				Weight: m.Weight, AdminUp: m.AdminStateUp && p.AdminStateUp})
		}
	}
	if hm, ok := o.monitors[s.monitorOf(p.ID)]; ok && hm.ProvisioningStatus != lbPendingDelete && hm.AdminStateUp {
		li.Monitor = &MonitorInfo{Type: hm.Type, Delay: hm.Delay, Timeout: hm.Timeout, MaxRetries: hm.MaxRetries,
			HTTPMethod: hm.HTTPMethod, URLPath: hm.URLPath, ExpectedCodes: hm.ExpectedCodes}
	}
	return li
}
