package openstacktest

import (
	"encoding/json"
	"net/http"
	"slices"
)

func (s *Sim) serverGroupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/os-server-groups", s.listServerGroups)
	mux.HandleFunc("POST "+novaBase+"/os-server-groups", s.createServerGroup)
	mux.HandleFunc("GET "+novaBase+"/os-server-groups/{id}", s.getServerGroup)
	mux.HandleFunc("DELETE "+novaBase+"/os-server-groups/{id}", s.deleteServerGroup)
}

// renderServerGroup renders a group in the shape of microversion mv: a policies list before
// 2.64, a policy with rules from then on.
func renderServerGroup(g *ServerGroup, mv microversion) map[string]any {
	m := map[string]any{"id": g.ID, "name": g.Name, "members": append([]string{}, g.Members...)}
	if mv >= 13 {
		m["project_id"], m["user_id"] = ProjectID, UserID
	}
	if mv >= 64 {
		rules := map[string]any{}
		if g.MaxServerPerHost > 0 {
			rules["max_server_per_host"] = g.MaxServerPerHost
		}
		m["policy"], m["rules"] = g.Policy, rules
	} else {
		m["policies"], m["metadata"] = []string{g.Policy}, map[string]any{}
	}
	return m
}

func (s *Sim) listServerGroups(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, g := range sortedBySeq(s.st.servergroups, func(g *ServerGroup) uint64 { return g.seq }) {
		out = append(out, renderServerGroup(g, microversionOf(r)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"server_groups": out})
}

func serverGroupNotFound(id string) *apiError {
	return errf(404, "Instance group %s could not be found.", id)
}

func (s *Sim) getServerGroup(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.st.servergroups[r.PathValue("id")]
	if !ok {
		writeError(w, serviceCompute, serverGroupNotFound(r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server_group": renderServerGroup(g, microversionOf(r))})
}

// createServerGroup validates the body against the schema of the request's microversion.
func (s *Sim) createServerGroup(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Group map[string]json.RawMessage `json:"server_group"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	mv := microversionOf(r)
	allowed := map[string]bool{"name": true, "policies": mv < 64, "policy": mv >= 64, "rules": mv >= 64}
	for k := range body.Group {
		if !allowed[k] {
			writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server_group. Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	var req struct {
		Name     string   `json:"name"`
		Policies []string `json:"policies"`
		Policy   string   `json:"policy"`
		Rules    struct {
			MaxServerPerHost int `json:"max_server_per_host"`
		} `json:"rules"`
	}
	raw, _ := json.Marshal(body.Group)
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server_group: %v", err))
		return
	}
	if mv < 64 {
		if len(req.Policies) != 1 {
			writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute policies. Value: %v. The list must hold exactly one policy", req.Policies))
			return
		}
		req.Policy = req.Policies[0]
	}
	policies := []string{"affinity", "anti-affinity"}
	if mv >= 15 {
		policies = append(policies, "soft-affinity", "soft-anti-affinity")
	}
	switch {
	case req.Name == "" || len(req.Name) > 255:
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute name. Value: %s.", req.Name))
		return
	case !slices.Contains(policies, req.Policy):
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute policy. Value: %s. '%s' is not one of %q", req.Policy, req.Policy, policies))
		return
	case req.Rules.MaxServerPerHost != 0 && req.Policy != "anti-affinity":
		writeError(w, serviceCompute, errf(400, "Only anti-affinity policy supports rules."))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.st.servergroups) >= s.quotaLimit(serviceCompute, "server_groups") {
		writeError(w, serviceCompute, errf(403, "Quota exceeded, too many server groups."))
		return
	}
	g := &ServerGroup{ID: newID(), Name: req.Name, Policy: req.Policy, MaxServerPerHost: req.Rules.MaxServerPerHost, seq: s.st.next()}
	s.st.servergroups[g.ID] = g
	writeJSON(w, http.StatusOK, map[string]any{"server_group": renderServerGroup(g, mv)})
}

func (s *Sim) deleteServerGroup(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	if _, ok := s.st.servergroups[id]; !ok {
		writeError(w, serviceCompute, serverGroupNotFound(id))
		return
	}
	delete(s.st.servergroups, id)
	w.WriteHeader(http.StatusNoContent)
}
