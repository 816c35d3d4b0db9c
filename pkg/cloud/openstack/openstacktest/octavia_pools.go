package openstacktest

import (
	"encoding/json"
	"net/http"
	"time"
)

func (s *Sim) poolAPI() []octaviaRoute {
	return []octaviaRoute{
		{"GET", "/pools", s.octaviaList("pools", s.renderPools)},
		{"POST", "/pools", s.createPool},
		{"GET", "/pools/{id}", s.octaviaGet("pool", "Pool", s.renderPools)},
		{"PUT", "/pools/{id}", s.updatePool},
		{"DELETE", "/pools/{id}", s.deletePool},
		{"GET", "/pools/{pool}/members", s.listMembers},
		{"POST", "/pools/{pool}/members", s.createMember},
		{"GET", "/pools/{pool}/members/{id}", s.getMember},
		{"PUT", "/pools/{pool}/members/{id}", s.updateMember},
		{"DELETE", "/pools/{pool}/members/{id}", s.deleteMember},
	}
}

type poolRequest struct {
	Name               *string         `json:"name"`
	Description        *string         `json:"description"`
	AdminStateUp       *bool           `json:"admin_state_up"`
	ListenerID         string          `json:"listener_id"`
	LoadBalancerID     string          `json:"loadbalancer_id"`
	ProjectID          string          `json:"project_id"`
	Protocol           string          `json:"protocol"`
	LBAlgorithm        *string         `json:"lb_algorithm"`
	SessionPersistence json.RawMessage `json:"session_persistence"`
	Tags               *[]string       `json:"tags"`
	// TLS towards the members and graph creation are not simulated: refused when set.
	TLSEnabled        bool              `json:"tls_enabled"`
	TLSContainerRef   string            `json:"tls_container_ref"`
	CATLSContainerRef string            `json:"ca_tls_container_ref"`
	CRLContainerRef   string            `json:"crl_container_ref"`
	TLSCiphers        string            `json:"tls_ciphers"`
	TLSVersions       []string          `json:"tls_versions"`
	ALPNProtocols     []string          `json:"alpn_protocols"`
	HealthMonitor     json.RawMessage   `json:"healthmonitor"`
	Members           []json.RawMessage `json:"members"`
}

var poolUpdateAttrs = []string{"name", "description", "admin_state_up", "lb_algorithm",
	"session_persistence", "tags", "tls_enabled", "tls_container_ref", "ca_tls_container_ref",
	"crl_container_ref", "tls_ciphers", "tls_versions", "alpn_protocols"}

var poolCreateAttrs = append([]string{"listener_id", "loadbalancer_id", "project_id", "protocol",
	"healthmonitor", "members"}, poolUpdateAttrs...)

func (s *Sim) createPool(w http.ResponseWriter, r *http.Request) {
	var req poolRequest
	if e := decodeOctavia(r, "pool", poolCreateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusCreated, "pool", func() (map[string]any, string, *apiError) {
		p, e := s.newPool(req)
		if e != nil {
			return nil, "", e
		}
		return s.renderPool(p), p.LoadBalancerID, nil
	})
}

// newPool validates a pool as Octavia does and records it PENDING_CREATE, on a listener (as
// its default pool) or on a load balancer. Callers hold s.mu.
func (s *Sim) newPool(req poolRequest) (*Pool, *apiError) {
	switch {
	case req.Protocol == "":
		return nil, mandatory("protocol")
	case req.LBAlgorithm == nil:
		return nil, mandatory("lb_algorithm")
	case req.ProjectID != "" && req.ProjectID != ProjectID:
		return nil, errf(403, "Policy does not allow this request to be performed.")
	}
	if e := oneOf("protocol", req.Protocol, "HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP", "UDP", "SCTP"); e != nil {
		return nil, e
	}
	switch req.Protocol {
	case "PROXY", "PROXYV2", "SCTP":
		return nil, unsupported(req.Protocol + " pools are not simulated")
	}
	if len(req.HealthMonitor) > 0 && string(req.HealthMonitor) != "null" || len(req.Members) > 0 {
		return nil, unsupported("members and health monitors in the pool call are not simulated")
	}
	o := s.st.octavia
	var l *Listener
	lbID := req.LoadBalancerID
	switch {
	case req.ListenerID != "":
		var ok bool
		if l, ok = o.listeners[req.ListenerID]; !ok {
			return nil, lbNotFound("Listener", req.ListenerID)
		}
		if lbID != "" && lbID != l.LoadBalancerID {
			return nil, errf(400, "Validation failure: The listener %s is not on load balancer %s.", l.ID, lbID)
		}
		lbID = l.LoadBalancerID
	case lbID == "":
		return nil, errf(400, "Validation failure: Must provide at least one of: loadbalancer_id, listener_id")
	}
	lb, ok := o.lbs[lbID]
	if !ok {
		return nil, lbNotFound("Load Balancer", lbID)
	}
	if l != nil {
		if l.DefaultPoolID != "" {
			return nil, errf(409, "This listener already has a default pool")
		}
		if e := protocolsMatch(l.Protocol, req.Protocol); e != nil {
			return nil, e
		}
	}
	now := time.Now()
	p := &Pool{ID: newID(), LoadBalancerID: lb.ID, ProvisioningStatus: lbPendingCreate, OperatingStatus: lbOffline,
		AdminStateUp: true, Protocol: req.Protocol, Tags: []string{}, Created: now, seq: s.st.next()}
	if e := applyPool(p, req); e != nil {
		return nil, e
	}
	if e := mutable(lb); e != nil {
		return nil, e
	}
	lb.ProvisioningStatus = lbPendingUpdate
	if l != nil {
		l.DefaultPoolID, l.ProvisioningStatus = p.ID, lbPendingUpdate
	}
	o.pools[p.ID] = p
	return p, nil
}

// applyPool validates what a create or update sets and applies it to p; nothing is applied
// when it returns an error.
func applyPool(p *Pool, req poolRequest) *apiError {
	switch {
	case req.TLSEnabled || req.TLSContainerRef != "" || req.CATLSContainerRef != "" || req.CRLContainerRef != "" ||
		req.TLSCiphers != "" || len(req.TLSVersions) > 0 || len(req.ALPNProtocols) > 0:
		return unsupported("TLS towards members is not simulated")
	case len(req.SessionPersistence) > 0 && string(req.SessionPersistence) != "null":
		return unsupported("session persistence is not simulated")
	}
	if req.LBAlgorithm != nil {
		if e := oneOf("lb_algorithm", *req.LBAlgorithm, "ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"); e != nil {
			return e
		}
		if *req.LBAlgorithm == "SOURCE_IP_PORT" {
			return unsupported("Amphora provider does not support SOURCE_IP_PORT algorithm.")
		}
		p.LBAlgorithm = *req.LBAlgorithm
	}
	setIf(&p.Name, req.Name)
	setIf(&p.Description, req.Description)
	setIf(&p.AdminStateUp, req.AdminStateUp)
	if req.Tags != nil {
		p.Tags = tagsOf(req.Tags)
	}
	return nil
}

func (s *Sim) updatePool(w http.ResponseWriter, r *http.Request) {
	var req poolRequest
	if e := decodeOctavia(r, "pool", poolUpdateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	id := r.PathValue("id")
	s.octaviaChange(w, http.StatusOK, "pool", func() (map[string]any, string, *apiError) {
		p, lb, e := s.poolForChange(id)
		if e != nil {
			return nil, "", e
		}
		next := *p
		if e := applyPool(&next, req); e != nil {
			return nil, "", e
		}
		*p = next
		p.ProvisioningStatus, p.Updated = lbPendingUpdate, time.Now()
		s.markPoolParents(p, lb)
		return s.renderPool(p), lb.ID, nil
	})
}

func (s *Sim) deletePool(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.octaviaChange(w, http.StatusNoContent, "", func() (map[string]any, string, *apiError) {
		p, lb, e := s.poolForChange(id)
		if e != nil {
			return nil, "", e
		}
		s.markPoolParents(p, lb)
		p.ProvisioningStatus = lbPendingDelete
		return nil, lb.ID, nil
	})
}

// poolForChange finds a pool and its load balancer, which must be mutable. Callers hold s.mu.
func (s *Sim) poolForChange(id string) (*Pool, *LoadBalancer, *apiError) {
	p, ok := s.st.octavia.pools[id]
	if !ok {
		return nil, nil, lbNotFound("Pool", id)
	}
	lb := s.st.octavia.lbs[p.LoadBalancerID]
	if e := mutable(lb); e != nil {
		return nil, nil, e
	}
	return p, lb, nil
}

// markPoolParents sets the load balancer and the listeners using a pool PENDING_UPDATE while
// a change to the pool, its members or its monitor is applied. Callers hold s.mu.
func (s *Sim) markPoolParents(p *Pool, lb *LoadBalancer) {
	lb.ProvisioningStatus = lbPendingUpdate
	for _, l := range s.st.octavia.listeners {
		if l.DefaultPoolID == p.ID {
			l.ProvisioningStatus = lbPendingUpdate
		}
	}
}

// monitorOf is the ID of a pool's health monitor, "" when it has none. Callers hold s.mu.
func (s *Sim) monitorOf(poolID string) string {
	for _, hm := range s.st.octavia.monitors {
		if hm.PoolID == poolID {
			return hm.ID
		}
	}
	return ""
}

// removePool removes a pool with its members and health monitor; listeners that used it as
// their default pool lose it. Callers hold s.mu.
func (s *Sim) removePool(p *Pool) {
	o := s.st.octavia
	for _, m := range o.members {
		if m.PoolID == p.ID {
			delete(o.members, m.ID)
		}
	}
	delete(o.monitors, s.monitorOf(p.ID))
	for _, l := range o.listeners {
		if l.DefaultPoolID == p.ID {
			l.DefaultPoolID = ""
		}
	}
	delete(o.pools, p.ID)
}
