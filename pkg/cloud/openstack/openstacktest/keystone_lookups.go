package openstacktest

import "net/http"

// identityLookupRoutes serve what a project member may read of Keystone: its own token's
// catalog and projects, its project and its user. Everything else about other projects and
// users is refused as Keystone's default policy refuses it to a member.
func (s *Sim) identityLookupRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /identity/v3/auth/catalog", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"catalog": s.catalog(), "links": s.identityLinks("/auth/catalog")})
	})
	mux.HandleFunc("GET /identity/v3/auth/projects", s.ownProjects("/auth/projects"))
	mux.HandleFunc("GET /identity/v3/users/{id}/projects", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != UserID {
			writeError(w, serviceIdentity, identityForbidden("list_user_projects"))
			return
		}
		s.ownProjects("/users/"+UserID+"/projects")(w, r)
	})
	mux.HandleFunc("GET /identity/v3/auth/domains", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"domains": []any{}, "links": s.identityLinks("/auth/domains")})
	})
	mux.HandleFunc("GET /identity/v3/projects/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != ProjectID {
			writeError(w, serviceIdentity, identityForbidden("get_project"))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"project": s.projectDoc()})
	})
	mux.HandleFunc("GET /identity/v3/projects", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, serviceIdentity, identityForbidden("list_projects"))
	})
	mux.HandleFunc("GET /identity/v3/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != UserID {
			writeError(w, serviceIdentity, identityForbidden("get_user"))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"user": map[string]any{
			"id": UserID, "name": Username, "domain_id": DomainID, "enabled": true, "password_expires_at": nil,
			"options": map[string]any{}, "links": map[string]any{"self": s.st.baseURL + "/identity/v3/users/" + UserID}}})
	})
	mux.HandleFunc("GET /identity/v3/users", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, serviceIdentity, identityForbidden("list_users"))
	})
}

func identityForbidden(action string) *apiError {
	return errf(403, "You are not authorized to perform the requested action: identity:%s.", action)
}

func (s *Sim) identityLinks(path string) map[string]any {
	return map[string]any{"self": s.st.baseURL + "/identity/v3" + path, "previous": nil, "next": nil}
}

func (s *Sim) projectDoc() map[string]any {
	return map[string]any{"id": ProjectID, "name": ProjectName, "domain_id": DomainID, "description": "",
		"enabled": true, "parent_id": DomainID, "is_domain": false, "tags": []string{}, "options": map[string]any{},
		"links": map[string]any{"self": s.st.baseURL + "/identity/v3/projects/" + ProjectID}}
}

func (s *Sim) ownProjects(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"projects": []any{s.projectDoc()}, "links": s.identityLinks(path)})
	}
}
