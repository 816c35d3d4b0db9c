package openstacktest

import "net/http"

func (s *Sim) novaQuotaRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/os-quota-sets/{project}", s.showComputeQuota(false))
	mux.HandleFunc("GET "+novaBase+"/os-quota-sets/{project}/detail", s.showComputeQuota(true))
	mux.HandleFunc("GET "+novaBase+"/os-quota-sets/{project}/defaults", s.showComputeQuota(false))
	mux.HandleFunc("PUT "+novaBase+"/os-quota-sets/{project}", novaPolicyDenied("os-quota-sets:update"))
	mux.HandleFunc("DELETE "+novaBase+"/os-quota-sets/{project}", novaPolicyDenied("os-quota-sets:delete"))
	mux.HandleFunc("GET "+novaBase+"/limits", s.computeLimits)
}

// novaPolicyDenied answers an admin-only call as Nova's default policy does for a member.
func novaPolicyDenied(rule string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, serviceCompute, errf(403, "Policy doesn't allow os_compute_api:%s to be performed.", rule))
	}
}

// showComputeQuota serves a project's quota set, with usage when detailed. A member may read
// only its own project.
func (s *Sim) showComputeQuota(detail bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("project") != ProjectID {
			writeError(w, serviceCompute, errf(403, "Policy doesn't allow os_compute_api:os-quota-sets:show to be performed."))
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		set := map[string]any{"id": ProjectID}
		for _, it := range quotaItemsOf(serviceCompute, microversionOf(r)) {
			if detail {
				set[it.name] = map[string]any{"limit": it.reported(&s.st.quota), "in_use": it.usage(s.st), "reserved": 0}
			} else {
				set[it.name] = it.reported(&s.st.quota)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"quota_set": set})
	}
}

// computeLimits serves GET /limits: the absolute limits and their usage under Nova's names.
func (s *Sim) computeLimits(w http.ResponseWriter, r *http.Request) {
	mv := microversionOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := func(name string) int { return quotaItemNamed(serviceCompute, name).reported(&s.st.quota) }
	abs := map[string]any{
		"maxTotalInstances": limit("instances"), "maxTotalCores": limit("cores"), "maxTotalRAMSize": limit("ram"),
		"maxTotalKeypairs": limit("key_pairs"), "maxServerMeta": limit("metadata_items"),
		"maxServerGroups": limit("server_groups"), "maxServerGroupMembers": limit("server_group_members"),
		"totalInstancesUsed": len(s.st.servers), "totalServerGroupsUsed": len(s.st.servergroups),
		"totalCoresUsed": s.st.flavorSum(func(f *Flavor) int { return f.VCPUs }),
		"totalRAMUsed":   s.st.flavorSum(func(f *Flavor) int { return f.RAM }),
	}
	if mv < 36 {
		abs["maxSecurityGroups"], abs["maxSecurityGroupRules"], abs["maxTotalFloatingIps"] = -1, -1, -1
		abs["totalSecurityGroupsUsed"], abs["totalFloatingIpsUsed"] = 0, 0
	}
	if mv < 39 {
		abs["maxImageMeta"] = maxServerMetadata
	}
	if mv < 57 {
		abs["maxPersonality"], abs["maxPersonalitySize"] = 5, 10240
	}
	writeJSON(w, http.StatusOK, map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}
