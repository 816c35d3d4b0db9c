package openstacktest

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"time"
)

func (s *Sim) listenerAPI() []octaviaRoute {
	return []octaviaRoute{
		{"GET", "/listeners", s.octaviaList("listeners", s.renderListeners)},
		{"POST", "/listeners", s.createListener},
		{"GET", "/listeners/{id}", s.octaviaGet("listener", "Listener", s.renderListeners)},
		{"PUT", "/listeners/{id}", s.updateListener},
		{"DELETE", "/listeners/{id}", s.deleteListener},
	}
}

type listenerRequest struct {
	Name                 *string   `json:"name"`
	Description          *string   `json:"description"`
	AdminStateUp         *bool     `json:"admin_state_up"`
	Protocol             string    `json:"protocol"`
	ProtocolPort         *int      `json:"protocol_port"`
	LoadBalancerID       string    `json:"loadbalancer_id"`
	ProjectID            string    `json:"project_id"`
	DefaultPoolID        *string   `json:"default_pool_id"`
	ConnectionLimit      *int      `json:"connection_limit"`
	AllowedCIDRs         *[]string `json:"allowed_cidrs"`
	TimeoutClientData    *int      `json:"timeout_client_data"`
	TimeoutMemberConnect *int      `json:"timeout_member_connect"`
	TimeoutMemberData    *int      `json:"timeout_member_data"`
	TimeoutTCPInspect    *int      `json:"timeout_tcp_inspect"`
	Tags                 *[]string `json:"tags"`
	ClientAuthentication string    `json:"client_authentication"`
	// What needs TLS certificates (Barbican) or HTTP processing in the amphora, which the
	// simulator does not do: refused when set.
	InsertHeaders           map[string]string `json:"insert_headers"`
	DefaultTLSContainerRef  string            `json:"default_tls_container_ref"`
	SNIContainerRefs        []string          `json:"sni_container_refs"`
	ClientCATLSContainerRef string            `json:"client_ca_tls_container_ref"`
	ClientCRLContainerRef   string            `json:"client_crl_container_ref"`
	ALPNProtocols           []string          `json:"alpn_protocols"`
	TLSCiphers              string            `json:"tls_ciphers"`
	TLSVersions             []string          `json:"tls_versions"`
	HSTSMaxAge              *int              `json:"hsts_max_age"`
	HSTSIncludeSubdomains   bool              `json:"hsts_include_subdomains"`
	HSTSPreload             bool              `json:"hsts_preload"`
	DefaultPool             json.RawMessage   `json:"default_pool"`
	L7Policies              []json.RawMessage `json:"l7policies"`
}

var listenerUpdateAttrs = []string{"name", "description", "admin_state_up", "default_pool_id",
	"connection_limit", "allowed_cidrs", "timeout_client_data", "timeout_member_connect",
	"timeout_member_data", "timeout_tcp_inspect", "tags", "client_authentication", "insert_headers",
	"default_tls_container_ref", "sni_container_refs", "client_ca_tls_container_ref",
	"client_crl_container_ref", "alpn_protocols", "tls_ciphers", "tls_versions", "hsts_max_age",
	"hsts_include_subdomains", "hsts_preload"}

var listenerCreateAttrs = append([]string{"protocol", "protocol_port", "loadbalancer_id", "project_id",
	"default_pool", "l7policies"}, listenerUpdateAttrs...)

// Octavia's defaults for the haproxy timeouts, in milliseconds, and its bound on them.
const (
	defaultTimeoutClientData    = 50000
	defaultTimeoutMemberConnect = 5000
	defaultTimeoutMemberData    = 50000
	maxTimeout                  = 24 * 60 * 60 * 1000
)

func (s *Sim) createListener(w http.ResponseWriter, r *http.Request) {
	var req listenerRequest
	if e := decodeOctavia(r, "listener", listenerCreateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusCreated, "listener", func() (map[string]any, string, *apiError) {
		l, e := s.newListener(req)
		if e != nil {
			return nil, "", e
		}
		return s.renderListener(l), l.LoadBalancerID, nil
	})
}

// newListener validates a listener as Octavia does and records it PENDING_CREATE, its load
// balancer PENDING_UPDATE. Callers hold s.mu.
func (s *Sim) newListener(req listenerRequest) (*Listener, *apiError) {
	switch {
	case req.Protocol == "":
		return nil, mandatory("protocol")
	case req.ProtocolPort == nil:
		return nil, mandatory("protocol_port")
	case req.LoadBalancerID == "":
		return nil, mandatory("loadbalancer_id")
	case req.ProjectID != "" && req.ProjectID != ProjectID:
		return nil, errf(403, "Policy does not allow this request to be performed.")
	}
	if e := oneOf("protocol", req.Protocol, "HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "UDP", "SCTP", "PROMETHEUS"); e != nil {
		return nil, e
	}
	switch req.Protocol {
	case "TERMINATED_HTTPS", "SCTP", "PROMETHEUS":
		return nil, unsupported(req.Protocol + " listeners are not simulated")
	}
	if e := inRange("protocol_port", *req.ProtocolPort, 1, 65535); e != nil {
		return nil, e
	}
	o := s.st.octavia
	lb, ok := o.lbs[req.LoadBalancerID]
	if !ok {
		return nil, lbNotFound("Load Balancer", req.LoadBalancerID)
	}
	now := time.Now()
	l := &Listener{ID: newID(), LoadBalancerID: lb.ID, ProvisioningStatus: lbPendingCreate,
		OperatingStatus: lbOffline, AdminStateUp: true, Protocol: req.Protocol, ProtocolPort: *req.ProtocolPort,
		ConnectionLimit: -1, TimeoutClientData: defaultTimeoutClientData,
		TimeoutMemberConnect: defaultTimeoutMemberConnect, TimeoutMemberData: defaultTimeoutMemberData,
		Tags: []string{}, Created: now, seq: s.st.next()}
	if e := s.applyListener(l, lb, req); e != nil {
		return nil, e
	}
	if e := mutable(lb); e != nil {
		return nil, e
	}
	for _, other := range o.listeners {
		if other.LoadBalancerID == lb.ID && other.ProtocolPort == l.ProtocolPort && (other.Protocol == "UDP") == (l.Protocol == "UDP") {
			return nil, errf(409, "Another Listener on this Load Balancer is already using protocol %s and protocol_port %d", other.Protocol, l.ProtocolPort)
		}
	}
	lb.ProvisioningStatus = lbPendingUpdate
	o.listeners[l.ID] = l
	return l, nil
}

// applyListener validates the attributes a create or update sets and applies them to l.
// Nothing is applied when it returns an error. Callers hold s.mu.
func (s *Sim) applyListener(l *Listener, lb *LoadBalancer, req listenerRequest) *apiError {
	switch {
	case len(req.InsertHeaders) > 0:
		return unsupported("header insertion is not simulated")
	case req.DefaultTLSContainerRef != "" || len(req.SNIContainerRefs) > 0 || req.ClientCATLSContainerRef != "" ||
		req.ClientCRLContainerRef != "" || len(req.ALPNProtocols) > 0 || req.TLSCiphers != "" || len(req.TLSVersions) > 0:
		return unsupported("TLS is not simulated")
	case req.HSTSMaxAge != nil || req.HSTSIncludeSubdomains || req.HSTSPreload:
		return unsupported("HTTP Strict Transport Security needs TLS termination, which is not simulated")
	case req.ClientAuthentication != "" && req.ClientAuthentication != "NONE":
		return unsupported("client authentication needs TLS termination, which is not simulated")
	case len(req.DefaultPool) > 0 && string(req.DefaultPool) != "null" || len(req.L7Policies) > 0:
		return unsupported("pools and L7 policies in the listener call are not simulated")
	}
	for _, t := range []struct {
		field string
		v     *int
	}{{"timeout_client_data", req.TimeoutClientData}, {"timeout_member_connect", req.TimeoutMemberConnect},
		{"timeout_member_data", req.TimeoutMemberData}, {"timeout_tcp_inspect", req.TimeoutTCPInspect}} {
		if t.v != nil {
			if e := inRange(t.field, *t.v, 0, maxTimeout); e != nil {
				return e
			}
		}
	}
	if req.ConnectionLimit != nil {
		if e := inRange("connection_limit", *req.ConnectionLimit, -1, 1<<31-1); e != nil {
			return e
		}
	}
	if req.AllowedCIDRs != nil {
		if e := checkAllowedCIDRs(*req.AllowedCIDRs, lb.VIPAddress); e != nil {
			return e
		}
	}
	if id := deref(req.DefaultPoolID); id != "" {
		p, ok := s.st.octavia.pools[id]
		if !ok || p.LoadBalancerID != lb.ID {
			return lbNotFound("Pool", id)
		}
		if e := protocolsMatch(l.Protocol, p.Protocol); e != nil {
			return e
		}
	}
	setIf(&l.Name, req.Name)
	setIf(&l.Description, req.Description)
	setIf(&l.AdminStateUp, req.AdminStateUp)
	setIf(&l.DefaultPoolID, req.DefaultPoolID)
	setIf(&l.ConnectionLimit, req.ConnectionLimit)
	setIf(&l.TimeoutClientData, req.TimeoutClientData)
	setIf(&l.TimeoutMemberConnect, req.TimeoutMemberConnect)
	setIf(&l.TimeoutMemberData, req.TimeoutMemberData)
	setIf(&l.TimeoutTCPInspect, req.TimeoutTCPInspect)
	if req.AllowedCIDRs != nil {
		l.AllowedCIDRs = slices.Clone(*req.AllowedCIDRs)
	}
	if req.Tags != nil {
		l.Tags = tagsOf(req.Tags)
	}
	return nil
}

// checkAllowedCIDRs checks the source ranges of a listener: CIDRs of the VIP's IP version.
func checkAllowedCIDRs(cidrs []string, vip string) *apiError {
	v, _ := netip.ParseAddr(vip)
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return errf(400, "Invalid input for field/attribute allowed_cidrs. Value: '%s'. Value should be IPv4 or IPv6 CIDR format", c)
		}
		if v.IsValid() && p.Addr().Is4() != v.Is4() {
			return errf(400, "Validation failure: CIDR %s IP version incompatible with all VIPs ['%s'] IP version.", c, vip)
		}
	}
	return nil
}

// protocolsMatch checks a pool's protocol against a listener's, by Octavia's table of valid
// combinations (limited to the protocols the simulator serves).
func protocolsMatch(listener, pool string) *apiError {
	valid := map[string][]string{
		"TCP":   {"HTTP", "HTTPS", "TCP"},
		"HTTP":  {"HTTP"},
		"HTTPS": {"HTTPS", "TCP"},
		"UDP":   {"UDP"},
	}
	if slices.Contains(valid[listener], pool) {
		return nil
	}
	return errf(400, "Validation failure: The pool protocol '%s' is invalid while the listener protocol is '%s'.", pool, listener)
}

func (s *Sim) updateListener(w http.ResponseWriter, r *http.Request) {
	var req listenerRequest
	if e := decodeOctavia(r, "listener", listenerUpdateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	id := r.PathValue("id")
	s.octaviaChange(w, http.StatusOK, "listener", func() (map[string]any, string, *apiError) {
		l, ok := s.st.octavia.listeners[id]
		if !ok {
			return nil, "", lbNotFound("Listener", id)
		}
		lb := s.st.octavia.lbs[l.LoadBalancerID]
		if e := mutable(lb); e != nil {
			return nil, "", e
		}
		next := *l
		if e := s.applyListener(&next, lb, req); e != nil {
			return nil, "", e
		}
		*l = next
		l.ProvisioningStatus, l.Updated, lb.ProvisioningStatus = lbPendingUpdate, time.Now(), lbPendingUpdate
		return s.renderListener(l), lb.ID, nil
	})
}

func (s *Sim) deleteListener(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.octaviaChange(w, http.StatusNoContent, "", func() (map[string]any, string, *apiError) {
		l, ok := s.st.octavia.listeners[id]
		if !ok {
			return nil, "", lbNotFound("Listener", id)
		}
		lb := s.st.octavia.lbs[l.LoadBalancerID]
		if e := mutable(lb); e != nil {
			return nil, "", e
		}
		l.ProvisioningStatus, lb.ProvisioningStatus = lbPendingDelete, lbPendingUpdate
		return nil, lb.ID, nil
	})
}
