package openstacktest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func (s *Sim) monitorAPI() []octaviaRoute {
	return []octaviaRoute{
		{"GET", "/healthmonitors", s.octaviaList("healthmonitors", s.renderMonitors)},
		{"POST", "/healthmonitors", s.createMonitor},
		{"GET", "/healthmonitors/{id}", s.octaviaGet("healthmonitor", "Health Monitor", s.renderMonitors)},
		{"PUT", "/healthmonitors/{id}", s.updateMonitor},
		{"DELETE", "/healthmonitors/{id}", s.deleteMonitor},
	}
}

type monitorRequest struct {
	Name           *string   `json:"name"`
	PoolID         string    `json:"pool_id"`
	ProjectID      string    `json:"project_id"`
	Type           string    `json:"type"`
	Delay          *int      `json:"delay"`
	Timeout        *int      `json:"timeout"`
	MaxRetries     *int      `json:"max_retries"`
	MaxRetriesDown *int      `json:"max_retries_down"`
	HTTPMethod     *string   `json:"http_method"`
	URLPath        *string   `json:"url_path"`
	ExpectedCodes  *string   `json:"expected_codes"`
	HTTPVersion    *httpVer  `json:"http_version"`
	DomainName     *string   `json:"domain_name"`
	AdminStateUp   *bool     `json:"admin_state_up"`
	Tags           *[]string `json:"tags"`
}

// httpVer is a monitor's http_version: Octavia's type is a float, which gophercloud sends as a
// string ("1.1") and Octavia returns as a number.
type httpVer string

func (v *httpVer) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err == nil {
		*v = httpVer(strconv.FormatFloat(f, 'f', 1, 64))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*v = httpVer(s)
	return nil
}

var monitorUpdateAttrs = []string{"name", "delay", "timeout", "max_retries", "max_retries_down",
	"http_method", "url_path", "expected_codes", "http_version", "domain_name", "admin_state_up", "tags"}

var monitorCreateAttrs = append([]string{"pool_id", "project_id", "type"}, monitorUpdateAttrs...)

// expectedCodes is Octavia's pattern for expected_codes: a code, a list or a range.
var expectedCodes = regexp.MustCompile(`^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$`)

func (s *Sim) createMonitor(w http.ResponseWriter, r *http.Request) {
	var req monitorRequest
	if e := decodeOctavia(r, "healthmonitor", monitorCreateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusCreated, "healthmonitor", func() (map[string]any, string, *apiError) {
		hm, lbID, e := s.newMonitor(req)
		if e != nil {
			return nil, "", e
		}
		return s.renderMonitor(hm), lbID, nil
	})
}

// newMonitor validates a health monitor as Octavia does and records it PENDING_CREATE.
// Callers hold s.mu.
func (s *Sim) newMonitor(req monitorRequest) (*HealthMonitor, string, *apiError) {
	for _, m := range []struct {
		field string
		set   bool
	}{{"pool_id", req.PoolID != ""}, {"type", req.Type != ""}, {"delay", req.Delay != nil},
		{"timeout", req.Timeout != nil}, {"max_retries", req.MaxRetries != nil}} {
		if !m.set {
			return nil, "", mandatory(m.field)
		}
	}
	if req.ProjectID != "" && req.ProjectID != ProjectID {
		return nil, "", errf(403, "Policy does not allow this request to be performed.")
	}
	if e := oneOf("type", req.Type, "HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP"); e != nil {
		return nil, "", e
	}
	o := s.st.octavia
	p, ok := o.pools[req.PoolID]
	if !ok {
		return nil, "", lbNotFound("Pool", req.PoolID)
	}
	switch {
	case req.Type == "SCTP":
		return nil, "", unsupported("SCTP health monitors are not simulated")
	case req.Type == "UDP-CONNECT" && p.Protocol != "UDP":
		return nil, "", errf(400, "Validation failure: The %s type is only supported for pools of type UDP.", req.Type)
	case p.Protocol == "UDP" && req.Type != "UDP-CONNECT" && req.Type != "HTTP" && req.Type != "TCP":
		return nil, "", errf(400, "Validation failure: The associated pool protocol is UDP, so only a UDP-CONNECT, HTTP, TCP type is supported.")
	}
	now := time.Now()
	hm := &HealthMonitor{ID: newID(), PoolID: p.ID, ProvisioningStatus: lbPendingCreate, OperatingStatus: lbOffline,
		AdminStateUp: true, Type: req.Type, MaxRetriesDown: 3, Tags: []string{}, Created: now, seq: s.st.next()}
	if hm.httpType() {
		hm.HTTPMethod, hm.URLPath, hm.ExpectedCodes = "GET", "/", "200"
	}
	if e := applyMonitor(hm, req); e != nil {
		return nil, "", e
	}
	lb := o.lbs[p.LoadBalancerID]
	if e := mutable(lb); e != nil {
		return nil, "", e
	}
	if s.monitorOf(p.ID) != "" {
		return nil, "", errf(409, "This pool already has a health monitor")
	}
	p.ProvisioningStatus = lbPendingUpdate
	s.markPoolParents(p, lb)
	o.monitors[hm.ID] = hm
	return hm, lb.ID, nil
}

func (hm *HealthMonitor) httpType() bool { return hm.Type == "HTTP" || hm.Type == "HTTPS" }

// applyMonitor validates what a create or update sets and applies it to hm; nothing is
// applied when it returns an error.
func applyMonitor(hm *HealthMonitor, req monitorRequest) *apiError {
	for _, n := range []struct {
		field    string
		v        *int
		min, max int
	}{{"delay", req.Delay, 0, 1<<31 - 1}, {"timeout", req.Timeout, 0, 1<<31 - 1},
		{"max_retries", req.MaxRetries, 1, 10}, {"max_retries_down", req.MaxRetriesDown, 1, 10}} {
		if n.v != nil {
			if e := inRange(n.field, *n.v, n.min, n.max); e != nil {
				return e
			}
		}
	}
	httpOnly := req.HTTPMethod != nil || req.URLPath != nil || req.ExpectedCodes != nil || req.HTTPVersion != nil || req.DomainName != nil
	if httpOnly && !hm.httpType() {
		return errf(400, "Validation failure: http_method, url_path, expected_codes, http_version and domain_name are only valid for HTTP and HTTPS health monitors, not %s.", hm.Type)
	}
	if req.HTTPMethod != nil {
		if e := oneOf("http_method", *req.HTTPMethod, "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"); e != nil {
			return e
		}
	}
	if req.URLPath != nil && !strings.HasPrefix(*req.URLPath, "/") {
		return errf(400, "Invalid input for field/attribute url_path. Value: '%s'. Value should start with '/'", *req.URLPath)
	}
	if req.ExpectedCodes != nil && !expectedCodes.MatchString(*req.ExpectedCodes) {
		return errf(400, "Invalid input for field/attribute expected_codes. Value: '%s'. Value should match the pattern %s", *req.ExpectedCodes, expectedCodes)
	}
	if req.HTTPVersion != nil {
		if e := oneOf("http_version", string(*req.HTTPVersion), "1.0", "1.1"); e != nil {
			return e
		}
	}
	version := hm.HTTPVersion
	setIf(&version, (*string)(req.HTTPVersion))
	if (deref(req.DomainName) != "" || req.DomainName == nil && hm.DomainName != "") && version != "1.1" {
		return errf(400, "Validation failure: http_version 1.1 is required when domain_name is set.")
	}
	hm.HTTPVersion = version
	setIf(&hm.Name, req.Name)
	setIf(&hm.Delay, req.Delay)
	setIf(&hm.Timeout, req.Timeout)
	setIf(&hm.MaxRetries, req.MaxRetries)
	setIf(&hm.MaxRetriesDown, req.MaxRetriesDown)
	setIf(&hm.HTTPMethod, req.HTTPMethod)
	setIf(&hm.URLPath, req.URLPath)
	setIf(&hm.ExpectedCodes, req.ExpectedCodes)
	setIf(&hm.DomainName, req.DomainName)
	setIf(&hm.AdminStateUp, req.AdminStateUp)
	if req.Tags != nil {
		hm.Tags = tagsOf(req.Tags)
	}
	return nil
}

// monitorForChange finds a health monitor with its pool and mutable load balancer.
// Callers hold s.mu.
func (s *Sim) monitorForChange(id string) (*HealthMonitor, *Pool, *LoadBalancer, *apiError) {
	hm, ok := s.st.octavia.monitors[id]
	if !ok {
		return nil, nil, nil, lbNotFound("Health Monitor", id)
	}
	p := s.st.octavia.pools[hm.PoolID]
	lb := s.st.octavia.lbs[p.LoadBalancerID]
	if e := mutable(lb); e != nil {
		return nil, nil, nil, e
	}
	return hm, p, lb, nil
}

func (s *Sim) updateMonitor(w http.ResponseWriter, r *http.Request) {
	var req monitorRequest
	if e := decodeOctavia(r, "healthmonitor", monitorUpdateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusOK, "healthmonitor", func() (map[string]any, string, *apiError) {
		hm, p, lb, e := s.monitorForChange(r.PathValue("id"))
		if e != nil {
			return nil, "", e
		}
		next := *hm
		if e := applyMonitor(&next, req); e != nil {
			return nil, "", e
		}
		*hm = next
		hm.ProvisioningStatus, hm.Updated, p.ProvisioningStatus = lbPendingUpdate, time.Now(), lbPendingUpdate
		s.markPoolParents(p, lb)
		return s.renderMonitor(hm), lb.ID, nil
	})
}

func (s *Sim) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	s.octaviaChange(w, http.StatusNoContent, "", func() (map[string]any, string, *apiError) {
		hm, p, lb, e := s.monitorForChange(r.PathValue("id"))
		if e != nil {
			return nil, "", e
		}
		hm.ProvisioningStatus, p.ProvisioningStatus = lbPendingDelete, lbPendingUpdate
		s.markPoolParents(p, lb)
		return nil, lb.ID, nil
	})
}
