package openstacktest

import (
	"net/http"
	"slices"
)

func (s *Sim) secGroupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+neutronBase+"/security-groups", s.createSecGroup)
	mux.HandleFunc("PUT "+neutronBase+"/security-groups/{id}", s.updateSecGroup)
	mux.HandleFunc("DELETE "+neutronBase+"/security-groups/{id}", s.deleteSecGroup)
	mux.HandleFunc("POST "+neutronBase+"/security-group-rules", s.createSGRule)
	mux.HandleFunc("DELETE "+neutronBase+"/security-group-rules/{id}", s.deleteSGRule)
}

func (g *SecurityGroup) attrs() attrs {
	return attrs{
		"name": {true, true, str(&g.Name)}, "description": {true, true, str(&g.Description)},
		"stateful": {true, true, boolean(&g.Stateful)}, "tags": {true, false, strs(&g.Tags)},
		"tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

func (s *Sim) createSecGroup(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "security_group")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	g := &SecurityGroup{Stateful: true, neutronStd: newStd("")}
	if e := g.attrs().apply("security_group", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.Name == "default" {
		writeError(w, serviceNetwork, neutronErr(409, "SecurityGroupDefaultAlreadyExists", "Default security group already exists."))
		return
	}
	if len(s.st.secgroups) >= s.quotaLimit(serviceNetwork, "security_group") {
		writeError(w, serviceNetwork, overQuota("security_group"))
		return
	}
	id := s.st.addSecurityGroup(g.Name)
	created := s.st.secgroups[id]
	g.ID, g.seq = created.ID, created.seq
	*created = *g
	writeJSON(w, http.StatusCreated, map[string]any{"security_group": s.renderSecGroup(created)})
}

// secGroupFor finds the group of the request's URL and checks If-Match, or answers. Callers
// hold s.mu.
func (s *Sim) secGroupFor(w http.ResponseWriter, r *http.Request) *SecurityGroup {
	g, ok := s.st.secgroups[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("security_group", r.PathValue("id")))
		return nil
	}
	if e := checkIfMatch(r, g.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return nil
	}
	return g
}

func (s *Sim) updateSecGroup(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "security_group")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.secGroupFor(w, r)
	if g == nil {
		return
	}
	c := *g
	if e := c.attrs().apply("security_group", in, true); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if g.Name == "default" && c.Name != "default" {
		writeError(w, serviceNetwork, neutronErr(409, "SecurityGroupCannotUpdateDefault", "Updating default security group not allowed."))
		return
	}
	c.touch()
	*g = c
	writeJSON(w, http.StatusOK, map[string]any{"security_group": s.renderSecGroup(g)})
}

func (s *Sim) deleteSecGroup(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.secGroupFor(w, r)
	if g == nil {
		return
	}
	if g.Name == "default" {
		writeError(w, serviceNetwork, neutronErr(409, "SecurityGroupCannotRemoveDefault", "Insufficient rights for removing default security group."))
		return
	}
	for _, p := range s.st.ports {
		if slices.Contains(p.SecurityGroupIDs, g.ID) {
			writeError(w, serviceNetwork, neutronErr(409, "SecurityGroupInUse", "Security Group %s in use.", g.ID))
			return
		}
	}
	for id, rule := range s.st.sgRules {
		if rule.SecurityGroupID == g.ID {
			delete(s.st.sgRules, id)
		}
	}
	delete(s.st.secgroups, g.ID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) renderSecGroup(g *SecurityGroup) map[string]any {
	rules := []any{}
	for _, r := range sortedBySeq(s.st.sgRules, func(r *SecurityGroupRule) uint64 { return r.seq }) {
		if r.SecurityGroupID == g.ID {
			rules = append(rules, renderSGRule(r))
		}
	}
	return g.render(map[string]any{"id": g.ID, "name": g.Name, "stateful": g.Stateful,
		"security_group_rules": rules})
}

func (s *Sim) renderSecGroups() []map[string]any {
	var out []map[string]any
	for _, g := range sortedBySeq(s.st.secgroups, func(g *SecurityGroup) uint64 { return g.seq }) {
		out = append(out, s.renderSecGroup(g))
	}
	return out
}
