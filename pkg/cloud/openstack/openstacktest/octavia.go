package openstacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Octavia, the load-balancer service, is served at /load-balancer: its version list at the root
// and API v2 under /v2 and /v2.0, each with and without the /lbaas prefix, as Octavia does.
const octaviaRoot = "/load-balancer"

// octaviaProvider is the provider driver every load balancer reports, devstack's default.
const octaviaProvider = "amphora"

type octaviaRoute struct {
	method, path string
	handler      http.HandlerFunc
}

func (s *Sim) loadBalancerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+octaviaRoot+"/{$}", s.octaviaVersions)
	mux.HandleFunc("GET "+octaviaRoot, s.octaviaVersions)
	mux.HandleFunc("GET "+octaviaRoot+"/{ver}", octaviaVersioned(octaviaV2))
	mux.HandleFunc("GET "+octaviaRoot+"/{ver}/{$}", octaviaVersioned(octaviaV2))
	var routes []octaviaRoute
	routes = append(routes, s.loadBalancerAPI()...)
	routes = append(routes, s.listenerAPI()...)
	routes = append(routes, s.poolAPI()...)
	routes = append(routes, s.monitorAPI()...)
	for _, rt := range routes {
		for _, prefix := range []string{"/{ver}/lbaas", "/{ver}"} {
			mux.HandleFunc(rt.method+" "+octaviaRoot+prefix+rt.path, octaviaVersioned(rt.handler))
		}
	}
	mux.HandleFunc(octaviaRoot+"/", notFound(serviceLoadBalancer))
}

// octaviaVersioned serves h under the versions Octavia serves, v2 and v2.0.
func octaviaVersioned(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v := r.PathValue("ver"); v != "v2" && v != "v2.0" {
			writeError(w, serviceLoadBalancer, errf(404, "The resource could not be found."))
			return
		}
		h(w, r)
	}
}

// octaviaVersions is Octavia's root document: one entry per API minor version, all served at
// /v2. The newest is CURRENT.
func (s *Sim) octaviaVersions(w http.ResponseWriter, r *http.Request) {
	updated := []string{"2016-12-11", "2018-04-20", "2018-07-31", "2018-12-18", "2018-12-19",
		"2019-01-21", "2019-01-25", "2018-01-25", "2019-02-12", "2019-03-04", "2019-03-05",
		"2019-06-24", "2019-09-11", "2019-09-13", "2019-11-10", "2020-03-10", "2020-03-15",
		"2020-04-29", "2020-04-29", "2020-05-12", "2020-08-02", "2020-09-03", "2020-09-04",
		"2020-09-07", "2020-10-15", "2021-10-02", "2022-08-29"}
	var versions []any
	for minor, day := range updated {
		status := "SUPPORTED"
		if minor == len(updated)-1 {
			status = "CURRENT"
		}
		versions = append(versions, map[string]any{
			"id": fmt.Sprintf("v2.%d", minor), "status": status, "updated": day + "T00:00:00Z",
			"links": []any{map[string]any{"href": s.st.baseURL + octaviaRoot + "/v2", "rel": "self"}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": versions})
}

// octaviaV2 answers GET /v2 as Octavia's V2 controller does: with the JSON string "v2".
func octaviaV2(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, "v2")
}

// SetLoadBalancerTime changes how long a change keeps its load balancer in a PENDING_*
// provisioning status, during which Octavia refuses other changes to it with 409.
func (s *Sim) SetLoadBalancerTime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.octavia.provisionTime = d
}

// decodeOctavia decodes a body of the form {root: {...}} into v. Like WSME it refuses an
// attribute the call does not take, naming it, instead of ignoring it.
func decodeOctavia(r *http.Request, root string, allowed []string, v any) *apiError {
	var outer map[string]json.RawMessage
	if e := decodeBody(r, &outer); e != nil {
		return e
	}
	inner, ok := outer[root]
	if !ok || string(inner) == "null" {
		return errf(400, "Invalid input for field/attribute %s. Value: 'None'. Mandatory field missing.", root)
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(inner, &attrs); err != nil {
		return errf(400, "Invalid input for field/attribute %s. Value: '%s'. Invalid data type.", root, inner)
	}
	for k := range attrs {
		if !slices.Contains(allowed, k) {
			return errf(400, "Invalid input for field/attribute %s. Value: '%s'. Unknown attribute for argument %s: %s", root, inner, root, k)
		}
	}
	if err := json.Unmarshal(inner, v); err != nil {
		return errf(400, "Invalid input for field/attribute %s. Value: '%s'. %v", root, inner, err)
	}
	return nil
}

// unsupported is Octavia's answer to an option the provider driver cannot honour. The
// simulator answers it for what it does not simulate (TLS containers, for one) rather than
// accepting and dropping it.
func unsupported(what string) *apiError {
	return errf(501, "Provider '%s' does not support a requested option: %s", octaviaProvider, what)
}

// mandatory is WSME's error for a required attribute that is missing.
func mandatory(field string) *apiError {
	return errf(400, "Invalid input for field/attribute %s. Value: 'None'. Mandatory field missing.", field)
}

// oneOf checks an enumerated attribute as WSME does.
func oneOf(field, value string, allowed ...string) *apiError {
	if slices.Contains(allowed, value) {
		return nil
	}
	return errf(400, "Invalid input for field/attribute %s. Value: '%s'. Value should be one of: %s", field, value, strings.Join(allowed, ", "))
}

// inRange checks an integer attribute as WSME does.
func inRange(field string, v, min, max int) *apiError {
	switch {
	case v < min:
		return errf(400, "Invalid input for field/attribute %s. Value: '%d'. Value should be greater or equal to %d", field, v, min)
	case v > max:
		return errf(400, "Invalid input for field/attribute %s. Value: '%d'. Value should be lower or equal to %d", field, v, max)
	}
	return nil
}

// lbNotFound is Octavia's 404 for a missing object; resource is e.g. "Load Balancer".
func lbNotFound(resource, id string) *apiError {
	return errf(404, "%s %s not found.", resource, id)
}

// mutable checks that no change is being applied to a load balancer, as Octavia does before a
// change to one of its children. Callers hold s.mu.
func mutable(lb *LoadBalancer) *apiError {
	if lb.ProvisioningStatus != lbActive {
		return errf(409, "Load Balancer %s is immutable and cannot be updated.", lb.ID)
	}
	return nil
}

// octaviaChange runs change under the lock and answers with its outcome: the object it
// returns, rendered under root, and the load balancer it touched settling once the
// provisioning time has passed. A nil body answers with the status alone.
func (s *Sim) octaviaChange(w http.ResponseWriter, status int, root string, change func() (body map[string]any, lbID string, e *apiError)) {
	s.mu.Lock()
	body, lbID, e := change()
	d := s.st.octavia.provisionTime
	s.mu.Unlock()
	if e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.after(d, func() { s.settle(lbID) })
	if body == nil {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, map[string]any{root: body})
}

// settle finishes the change being applied to a load balancer, as Octavia's worker does: what
// is PENDING_DELETE goes, everything else turns ACTIVE, and the data plane is told.
func (s *Sim) settle(lbID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.st.octavia
	lb, ok := o.lbs[lbID]
	if !ok {
		return
	}
	now := time.Now()
	if lb.ProvisioningStatus == lbPendingDelete {
		s.removeLoadBalancer(lb)
		s.networkChanged()
		return
	}
	for _, l := range o.listeners {
		if l.LoadBalancerID == lbID && l.ProvisioningStatus == lbPendingDelete {
			delete(o.listeners, l.ID)
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID == lbID && p.ProvisioningStatus == lbPendingDelete {
			s.removePool(p)
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID != lbID {
			continue
		}
		for _, m := range o.members {
			if m.PoolID == p.ID && m.ProvisioningStatus == lbPendingDelete {
				delete(o.members, m.ID)
			}
		}
		if hm := o.monitors[s.monitorOf(p.ID)]; hm != nil && hm.ProvisioningStatus == lbPendingDelete {
			delete(o.monitors, hm.ID)
		}
	}
	s.activate(lb, now)
	s.networkChanged()
}

// activate turns a load balancer and everything under it ACTIVE and sets the operating
// statuses an amphora reports: ONLINE, OFFLINE when set administratively down, and NO_MONITOR
// for members of a pool without a health monitor. Callers hold s.mu.
func (s *Sim) activate(lb *LoadBalancer, now time.Time) {
	o := s.st.octavia
	online := func(up bool) string {
		if up {
			return lbOnline
		}
		return lbOffline
	}
	// Octavia's worker writes the status, and so the updated_at, of what it changed.
	settled := func(status *string, updated *time.Time) {
		if *status != lbActive {
			*status, *updated = lbActive, now
		}
	}
	settled(&lb.ProvisioningStatus, &lb.Updated)
	lb.OperatingStatus = online(lb.AdminStateUp)
	for _, l := range o.listeners {
		if l.LoadBalancerID == lb.ID {
			settled(&l.ProvisioningStatus, &l.Updated)
			l.OperatingStatus = online(l.AdminStateUp)
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID != lb.ID {
			continue
		}
		settled(&p.ProvisioningStatus, &p.Updated)
		p.OperatingStatus = online(p.AdminStateUp)
		hm := o.monitors[s.monitorOf(p.ID)]
		if hm != nil {
			settled(&hm.ProvisioningStatus, &hm.Updated)
			hm.OperatingStatus = online(hm.AdminStateUp)
		}
		for _, m := range o.members {
			if m.PoolID != p.ID {
				continue
			}
			settled(&m.ProvisioningStatus, &m.Updated)
			switch {
			case !m.AdminStateUp:
				m.OperatingStatus = lbOffline
			case hm == nil:
				m.OperatingStatus = lbNoMonitor
			default:
				m.OperatingStatus = lbOnline
			}
		}
	}
}
