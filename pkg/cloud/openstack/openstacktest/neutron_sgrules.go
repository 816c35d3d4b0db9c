package openstacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
)

// sgProtocols are the protocol names Neutron accepts; numbers 0-255 are accepted too.
var sgProtocols = []string{"ah", "any", "dccp", "egp", "esp", "gre", "hopopt", "icmp", "icmpv6", "igmp",
	"ipip", "ipv6-encap", "ipv6-frag", "ipv6-icmp", "ipv6-nonxt", "ipv6-opts", "ipv6-route", "ospf",
	"pgm", "rsvp", "sctp", "tcp", "udp", "udplite", "vrrp"}

func (rule *SecurityGroupRule) attrs() attrs {
	port := func(dst **int) func(json.RawMessage) error {
		return func(raw json.RawMessage) error { return json.Unmarshal(raw, dst) }
	}
	return attrs{
		"security_group_id": {true, false, str(&rule.SecurityGroupID)}, "direction": {true, false, str(&rule.Direction)},
		"ethertype": {true, false, str(&rule.EtherType)}, "protocol": {true, false, func(raw json.RawMessage) error {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return err
			}
			switch t := v.(type) {
			case nil:
				rule.Protocol = ""
			case string:
				rule.Protocol = t
			case float64:
				rule.Protocol = strconv.Itoa(int(t))
			default:
				return fmt.Errorf("protocol %s is not a string or a number", raw)
			}
			return nil
		}},
		"port_range_min": {true, false, port(&rule.PortRangeMin)}, "port_range_max": {true, false, port(&rule.PortRangeMax)},
		"remote_ip_prefix": {true, false, nullableStr(&rule.RemoteIPPrefix)},
		"remote_group_id":  {true, false, nullableStr(&rule.RemoteGroupID)},
		"description":      {true, true, str(&rule.Description)},
		"tenant_id":        {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

// validate checks a new rule as Neutron does; callers hold s.mu.
func (s *Sim) validateRule(rule *SecurityGroupRule) *apiError {
	bad := func(format string, args ...any) *apiError {
		return neutronErr(400, "HTTPBadRequest", format, args...)
	}
	if _, ok := s.st.secgroups[rule.SecurityGroupID]; !ok {
		return neutronNotFound("security_group", rule.SecurityGroupID)
	}
	if rule.Direction != "ingress" && rule.Direction != "egress" {
		return bad("Invalid input for direction. Reason: %s is not in valid_values.", rule.Direction)
	}
	if rule.EtherType != "IPv4" && rule.EtherType != "IPv6" {
		return bad("Invalid input for ethertype. Reason: %s is not in valid_values.", rule.EtherType)
	}
	if n, err := strconv.Atoi(rule.Protocol); rule.Protocol != "" && !slices.Contains(sgProtocols, rule.Protocol) && (err != nil || n < 0 || n > 255) {
		return neutronErr(400, "SecurityGroupRuleInvalidProtocol", "Security group rule protocol %s not supported. Only protocol values %v and integer representations [0 to 255] are supported.", rule.Protocol, sgProtocols)
	}
	if rule.RemoteIPPrefix != "" && rule.RemoteGroupID != "" {
		return neutronErr(400, "SecurityGroupRemoteGroupAndRemoteIpPrefix", "Only remote_ip_prefix or remote_group_id may be provided.")
	}
	if rule.RemoteIPPrefix != "" {
		p, err := netip.ParsePrefix(rule.RemoteIPPrefix)
		if err != nil {
			return bad("Invalid input for remote_ip_prefix. Reason: '%s' is not a valid IP subnet.", rule.RemoteIPPrefix)
		}
		if p.Addr().Is4() != (rule.EtherType == "IPv4") {
			return neutronErr(400, "SecurityGroupRuleParameterConflict", "Conflicting value ethertype %s for CIDR %s", rule.EtherType, rule.RemoteIPPrefix)
		}
	}
	if rule.RemoteGroupID != "" && s.st.secgroups[rule.RemoteGroupID] == nil {
		return neutronNotFound("security_group", rule.RemoteGroupID)
	}
	return validatePorts(rule)
}

// validatePorts checks the port range, or the ICMP type and code carried in it.
func validatePorts(rule *SecurityGroupRule) *apiError {
	lo, hi := rule.PortRangeMin, rule.PortRangeMax
	if lo == nil && hi == nil {
		return nil
	}
	switch rule.Protocol {
	case "tcp", "udp", "dccp", "sctp", "udplite", "6", "17", "33", "132", "136":
		if lo == nil || hi == nil || *lo < 1 || *hi > 65535 || *lo > *hi {
			return neutronErr(400, "SecurityGroupInvalidPortRange", "For TCP/UDP protocols, port_range_min must be <= port_range_max")
		}
	case "icmp", "icmpv6", "ipv6-icmp", "1", "58":
		for _, v := range []*int{lo, hi} {
			if v != nil && (*v < 0 || *v > 255) {
				return neutronErr(400, "SecurityGroupInvalidIcmpValue", "Invalid value for ICMP field (port_range_min or port_range_max): %d. It must be 0 to 255.", *v)
			}
		}
		if lo == nil && hi != nil {
			return neutronErr(400, "SecurityGroupMissingIcmpType", "ICMP code (port-range-max) %d is provided but ICMP type (port-range-min) is missing.", *hi)
		}
	default:
		return neutronErr(400, "SecurityGroupInvalidProtocolForPortRange", "Invalid protocol %s for port range, only supported for TCP, UDP, UDPLITE, SCTP and DCCP.", rule.Protocol)
	}
	return nil
}

func sameRule(a, b *SecurityGroupRule) bool {
	eq := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return a.SecurityGroupID == b.SecurityGroupID && a.Direction == b.Direction && a.EtherType == b.EtherType &&
		a.Protocol == b.Protocol && eq(a.PortRangeMin, b.PortRangeMin) && eq(a.PortRangeMax, b.PortRangeMax) &&
		a.RemoteIPPrefix == b.RemoteIPPrefix && a.RemoteGroupID == b.RemoteGroupID
}

func (s *Sim) createSGRule(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "security_group_rule")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	rule := &SecurityGroupRule{EtherType: "IPv4"}
	if e := rule.attrs().apply("security_group_rule", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.validateRule(rule); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	for _, other := range s.st.sgRules {
		if sameRule(rule, other) {
			writeError(w, serviceNetwork, neutronErr(409, "SecurityGroupRuleExists", "Security group rule already exists. Rule id is %s.", other.ID))
			return
		}
	}
	if len(s.st.sgRules) >= s.quotaLimit(serviceNetwork, "security_group_rule") {
		writeError(w, serviceNetwork, overQuota("security_group_rule"))
		return
	}
	desc := rule.Description
	s.st.addRule(rule)
	rule.Description = desc
	if g := s.st.secgroups[rule.SecurityGroupID]; g != nil {
		g.touch()
	}
	writeJSON(w, http.StatusCreated, map[string]any{"security_group_rule": renderSGRule(rule)})
}

func (s *Sim) deleteSGRule(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rule, ok := s.st.sgRules[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("security_group_rule", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, rule.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	delete(s.st.sgRules, rule.ID)
	if g := s.st.secgroups[rule.SecurityGroupID]; g != nil {
		g.touch()
	}
	w.WriteHeader(http.StatusNoContent)
}

func renderSGRule(r *SecurityGroupRule) map[string]any {
	intOrNil := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	m := r.render(map[string]any{
		"id": r.ID, "security_group_id": r.SecurityGroupID, "direction": r.Direction, "ethertype": r.EtherType,
		"protocol": nullable(r.Protocol), "port_range_min": intOrNil(r.PortRangeMin), "port_range_max": intOrNil(r.PortRangeMax),
		"remote_ip_prefix": nullable(r.RemoteIPPrefix), "remote_group_id": nullable(r.RemoteGroupID),
		"remote_address_group_id": nil, "normalized_cidr": nullable(normalizedCIDR(r.RemoteIPPrefix)),
	})
	delete(m, "tags") // rules are not taggable
	return m
}

func normalizedCIDR(prefix string) string {
	p, err := netip.ParsePrefix(prefix)
	if err != nil {
		return ""
	}
	return p.Masked().String()
}

func (s *Sim) renderSGRules() []map[string]any {
	var out []map[string]any
	for _, r := range sortedBySeq(s.st.sgRules, func(r *SecurityGroupRule) uint64 { return r.seq }) {
		out = append(out, renderSGRule(r))
	}
	return out
}
