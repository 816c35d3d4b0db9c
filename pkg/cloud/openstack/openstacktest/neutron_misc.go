package openstacktest

import "net/http"

// neutronExtensions are the aliases of the API extensions whose behaviour the simulator
// implements; clients probe this list before using an extension.
var neutronExtensions = []struct{ alias, name string }{
	{"allowed-address-pairs", "Allowed Address Pairs"},
	{"availability_zone", "Availability Zone"}, {"binding", "Port Binding"},
	{"external-net", "Neutron external network"}, {"ext-gw-mode", "Neutron L3 Configurable external gateway mode"},
	{"filter-validation", "Filter parameters validation"}, {"network_availability_zone", "Network Availability Zone"},
	{"net-mtu", "Network MTU"}, {"net-mtu-writable", "Network MTU (writable)"}, {"pagination", "Pagination support"},
	{"port-security", "Port Security"}, {"project-id", "project_id field enabled"},
	{"quotas", "Quota management support"}, {"quota_details", "Quota details extension"},
	{"revision-if-match", "If-Match constraints based on revision_number"}, {"router", "Neutron L3 Router"},
	{"router_availability_zone", "Router Availability Zone"}, {"security-group", "security-group"},
	{"security-groups-normalized-cidr", "Normalized CIDR field for security group rules"},
	{"sorting", "Sorting support"}, {"standard-attr-description", "standard-attr-description"},
	{"standard-attr-revisions", "Resource revision numbers"}, {"standard-attr-tag", "Tag support for resources with standard attribute: subnet, trunk, network_segment_range, router, network, policy, subnetpool, port, security_group, floatingip"},
	{"standard-attr-timestamp", "Resource timestamps"}, {"stateful-security-group", "Stateful security group"},
	{"tag-creation", "Tag support for resources during creation"},
}

func (s *Sim) neutronMiscRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+neutronBase+"/extensions", s.listExtensions)
	mux.HandleFunc("GET "+neutronBase+"/extensions/{alias}", s.getExtension)
	mux.HandleFunc("GET "+neutronBase+"/availability_zones", s.networkAvailabilityZones)
	mux.HandleFunc("GET "+neutronBase+"/quotas/{project}", s.showNetworkQuota(false))
	mux.HandleFunc("GET "+neutronBase+"/quotas/{project}/details", s.showNetworkQuota(true))
	mux.HandleFunc("GET "+neutronBase+"/quotas/{project}/default", s.showNetworkQuota(false))
	for _, m := range []string{"PUT", "DELETE"} {
		mux.HandleFunc(m+" "+neutronBase+"/quotas/{project}", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, serviceNetwork, neutronErr(403, "PolicyNotAuthorized", "rule:%s_quota is disallowed by policy", map[string]string{"PUT": "update", "DELETE": "delete"}[r.Method]))
		})
	}
}

func renderExtension(alias, name string) map[string]any {
	return map[string]any{"alias": alias, "name": name, "description": name + ".",
		"updated": "2013-01-20T00:00:00-00:00", "links": []any{}}
}

func (s *Sim) listExtensions(w http.ResponseWriter, r *http.Request) {
	out := []any{}
	for _, e := range neutronExtensions {
		out = append(out, renderExtension(e.alias, e.name))
	}
	writeJSON(w, http.StatusOK, map[string]any{"extensions": out})
}

func (s *Sim) getExtension(w http.ResponseWriter, r *http.Request) {
	for _, e := range neutronExtensions {
		if e.alias == r.PathValue("alias") {
			writeJSON(w, http.StatusOK, map[string]any{"extension": renderExtension(e.alias, e.name)})
			return
		}
	}
	writeError(w, serviceNetwork, neutronErr(404, "HTTPNotFound", "Extension with alias %s does not exist", r.PathValue("alias")))
}

// networkAvailabilityZones lists the one zone for networks and for routers.
func (s *Sim) networkAvailabilityZones(w http.ResponseWriter, r *http.Request) {
	var out []map[string]any
	for _, res := range []string{"network", "router"} {
		out = append(out, map[string]any{"name": AvailabilityZone, "resource": res, "state": "available"})
	}
	var items []any
	for _, o := range out {
		if ok, e := neutronMatch(o, r.URL.Query()); e != nil {
			writeError(w, serviceNetwork, e)
			return
		} else if ok {
			items = append(items, o)
		}
	}
	if items == nil {
		items = []any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"availability_zones": items})
}

// showNetworkQuota serves the project's quota, with usage when detailed.
func (s *Sim) showNetworkQuota(detail bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("project") != ProjectID {
			writeError(w, serviceNetwork, neutronErr(403, "HTTPForbidden", "Non-admin is not authorized to access quotas for another project"))
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		q := map[string]any{}
		for _, it := range quotaItemsOf(serviceNetwork, 0) {
			if detail {
				q[it.name] = map[string]any{"limit": it.reported(&s.st.quota), "used": it.usage(s.st), "reserved": 0}
			} else {
				q[it.name] = it.reported(&s.st.quota)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"quota": q})
	}
}
