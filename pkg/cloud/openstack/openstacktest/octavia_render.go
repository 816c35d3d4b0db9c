package openstacktest

import (
	"maps"
	"slices"
	"strconv"
	"time"
)

// Octavia's timestamps have no zone; updated_at is null until the first update.
func tsOctavia(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

func idRefs(ids ...string) []any {
	out := []any{}
	for _, id := range ids {
		if id != "" {
			out = append(out, map[string]any{"id": id})
		}
	}
	return out
}

func orNull[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

func (s *Sim) renderLoadBalancer(lb *LoadBalancer) map[string]any {
	o := s.st.octavia
	var listeners, pools []string
	for _, l := range sortedBySeq(o.listeners, func(l *Listener) uint64 { return l.seq }) {
		if l.LoadBalancerID == lb.ID {
			listeners = append(listeners, l.ID)
		}
	}
	for _, p := range sortedBySeq(o.pools, func(p *Pool) uint64 { return p.seq }) {
		if p.LoadBalancerID == lb.ID {
			pools = append(pools, p.ID)
		}
	}
	return map[string]any{
		"id": lb.ID, "name": lb.Name, "description": lb.Description, "project_id": lb.ProjectID,
		"provisioning_status": lb.ProvisioningStatus, "operating_status": lb.OperatingStatus,
		"admin_state_up": lb.AdminStateUp, "vip_address": lb.VIPAddress, "vip_port_id": lb.VIPPortID,
		"vip_subnet_id": lb.VIPSubnetID, "vip_network_id": lb.VIPNetworkID, "vip_qos_policy_id": nil,
		"listeners": idRefs(listeners...), "pools": idRefs(pools...), "provider": lb.Provider,
		"flavor_id": "", "availability_zone": nil, "additional_vips": []any{},
		"tags": slices.Clone(lb.Tags), "created_at": tsOctavia(lb.Created), "updated_at": tsOctavia(lb.Updated)}
}

func (s *Sim) renderListener(l *Listener) map[string]any {
	var cidrs any // Octavia answers null, not [], for a listener open to all
	if len(l.AllowedCIDRs) > 0 {
		cidrs = slices.Clone(l.AllowedCIDRs)
	}
	return map[string]any{
		"id": l.ID, "name": l.Name, "description": l.Description, "project_id": ProjectID,
		"provisioning_status": l.ProvisioningStatus, "operating_status": l.OperatingStatus,
		"admin_state_up": l.AdminStateUp, "protocol": l.Protocol, "protocol_port": l.ProtocolPort,
		"connection_limit": l.ConnectionLimit, "default_pool_id": orNull(l.DefaultPoolID),
		"loadbalancers": idRefs(l.LoadBalancerID), "l7policies": []any{}, "insert_headers": map[string]string{},
		"timeout_client_data": l.TimeoutClientData, "timeout_member_connect": l.TimeoutMemberConnect,
		"timeout_member_data": l.TimeoutMemberData, "timeout_tcp_inspect": l.TimeoutTCPInspect,
		"allowed_cidrs": cidrs, "tags": slices.Clone(l.Tags),
		"default_tls_container_ref": nil, "sni_container_refs": []string{}, "client_authentication": "NONE",
		"client_ca_tls_container_ref": nil, "client_crl_container_ref": nil, "tls_ciphers": nil,
		"tls_versions": nil, "alpn_protocols": nil, "hsts_max_age": nil, "hsts_include_subdomains": false,
		"hsts_preload": false, "created_at": tsOctavia(l.Created), "updated_at": tsOctavia(l.Updated)}
}

func (s *Sim) renderPool(p *Pool) map[string]any {
	o := s.st.octavia
	var listeners, members []string
	for _, l := range sortedBySeq(o.listeners, func(l *Listener) uint64 { return l.seq }) {
		if l.DefaultPoolID == p.ID {
			listeners = append(listeners, l.ID)
		}
	}
	for _, m := range sortedBySeq(o.members, func(m *Member) uint64 { return m.seq }) {
		if m.PoolID == p.ID {
			members = append(members, m.ID)
		}
	}
	return map[string]any{
		"id": p.ID, "name": p.Name, "description": p.Description, "project_id": ProjectID,
		"provisioning_status": p.ProvisioningStatus, "operating_status": p.OperatingStatus,
		"admin_state_up": p.AdminStateUp, "protocol": p.Protocol, "lb_algorithm": p.LBAlgorithm,
		"session_persistence": nil, "loadbalancers": idRefs(p.LoadBalancerID),
		"listeners": idRefs(listeners...), "members": idRefs(members...),
		"healthmonitor_id": orNull(s.monitorOf(p.ID)), "tags": slices.Clone(p.Tags),
		"tls_enabled": false, "tls_container_ref": nil, "ca_tls_container_ref": nil,
		"crl_container_ref": nil, "tls_ciphers": nil, "tls_versions": nil, "alpn_protocols": nil,
		"created_at": tsOctavia(p.Created), "updated_at": tsOctavia(p.Updated)}
}

func (s *Sim) renderMember(m *Member) map[string]any {
	return map[string]any{
		"id": m.ID, "name": m.Name, "project_id": ProjectID,
		"provisioning_status": m.ProvisioningStatus, "operating_status": m.OperatingStatus,
		"admin_state_up": m.AdminStateUp, "address": m.Address, "protocol_port": m.ProtocolPort,
		"subnet_id": orNull(m.SubnetID), "weight": m.Weight, "backup": m.Backup,
		"monitor_address": nil, "monitor_port": nil, "vnic_type": "normal", "tags": slices.Clone(m.Tags),
		"created_at": tsOctavia(m.Created), "updated_at": tsOctavia(m.Updated)}
}

func (s *Sim) renderMonitor(hm *HealthMonitor) map[string]any {
	out := map[string]any{
		"id": hm.ID, "name": hm.Name, "project_id": ProjectID,
		"provisioning_status": hm.ProvisioningStatus, "operating_status": hm.OperatingStatus,
		"admin_state_up": hm.AdminStateUp, "type": hm.Type, "delay": hm.Delay, "timeout": hm.Timeout,
		"max_retries": hm.MaxRetries, "max_retries_down": hm.MaxRetriesDown,
		"http_method": orNull(hm.HTTPMethod), "url_path": orNull(hm.URLPath),
		"expected_codes": orNull(hm.ExpectedCodes), "http_version": nil, "domain_name": orNull(hm.DomainName),
		"pools": idRefs(hm.PoolID), "tags": slices.Clone(hm.Tags),
		"created_at": tsOctavia(hm.Created), "updated_at": tsOctavia(hm.Updated)}
	if v, err := strconv.ParseFloat(hm.HTTPVersion, 64); err == nil {
		out["http_version"] = v
	}
	return out
}

func (s *Sim) renderLoadBalancers() []map[string]any {
	return renderAll(s.st.octavia.lbs, func(v *LoadBalancer) uint64 { return v.seq }, s.renderLoadBalancer)
}

func (s *Sim) renderListeners() []map[string]any {
	return renderAll(s.st.octavia.listeners, func(v *Listener) uint64 { return v.seq }, s.renderListener)
}

func (s *Sim) renderPools() []map[string]any {
	return renderAll(s.st.octavia.pools, func(v *Pool) uint64 { return v.seq }, s.renderPool)
}

func (s *Sim) renderMonitors() []map[string]any {
	return renderAll(s.st.octavia.monitors, func(v *HealthMonitor) uint64 { return v.seq }, s.renderMonitor)
}

func (s *Sim) renderMembers(poolID string) []map[string]any {
	members := maps.Clone(s.st.octavia.members)
	maps.DeleteFunc(members, func(_ string, m *Member) bool { return m.PoolID != poolID })
	return renderAll(members, func(v *Member) uint64 { return v.seq }, s.renderMember)
}

func renderAll[T any](m map[string]*T, seq func(*T) uint64, render func(*T) map[string]any) []map[string]any {
	var out []map[string]any
	for _, v := range sortedBySeq(m, seq) {
		out = append(out, render(v))
	}
	return out
}
