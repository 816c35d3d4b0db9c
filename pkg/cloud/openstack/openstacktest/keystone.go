package openstacktest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"
)

func (s *Sim) identityRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/identity", s.identityVersions)
	mux.HandleFunc("GET /identity/v3/{$}", s.identityVersion)
	mux.HandleFunc("GET /identity/v3", s.identityVersion)
	mux.HandleFunc("POST /identity/v3/auth/tokens", s.issueToken)
	mux.HandleFunc("GET /identity/v3/auth/tokens", s.showToken)
	mux.HandleFunc("DELETE /identity/v3/auth/tokens", s.revokeToken)
	s.identityLookupRoutes(mux)
	mux.HandleFunc("/identity/", notFound(serviceIdentity))
}

func (s *Sim) identityV3Doc() map[string]any {
	return map[string]any{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []any{map[string]any{"rel": "self", "href": s.st.baseURL + "/identity/v3/"}},
		"media-types": []any{map[string]any{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}
}

func (s *Sim) identityVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{s.identityV3Doc()}}})
}

func (s *Sim) identityVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"version": s.identityV3Doc()})
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User struct {
					ID       string    `json:"id"`
					Name     string    `json:"name"`
					Password string    `json:"password"`
					Domain   *namedRef `json:"domain"`
				} `json:"user"`
			} `json:"password"`
			ApplicationCredential *struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Secret string `json:"secret"`
			} `json:"application_credential"`
			Token *struct {
				ID string `json:"id"`
			} `json:"token"`
		} `json:"identity"`
		Scope json.RawMessage `json:"scope"`
	} `json:"auth"`
}

type namedRef struct {
	ID     string    `json:"id"`
	Name   string    `json:"name"`
	Domain *namedRef `json:"domain"`
}

func domainMatches(d *namedRef) bool {
	return d != nil && (d.ID == DomainID || d.ID == "" && d.Name == DomainName)
}

var errUnauthenticated = errf(401, "The request you have made requires authentication.")

// authenticate checks the identity part of a request and returns the method used and whether
// the token it yields is project-scoped.
func (s *Sim) authenticate(req *authRequest) (method string, scoped bool, e *apiError) {
	id := req.Auth.Identity
	if len(id.Methods) != 1 {
		return "", false, errf(400, "exactly one authentication method is supported")
	}
	var scope struct {
		Project *namedRef `json:"project"`
	}
	if len(req.Auth.Scope) > 0 && string(req.Auth.Scope) != `"unscoped"` {
		if err := json.Unmarshal(req.Auth.Scope, &scope); err != nil {
			return "", false, errf(400, "invalid scope: %v", err)
		}
	}
	if p := scope.Project; p != nil && !(p.ID == ProjectID || p.ID == "" && p.Name == ProjectName && domainMatches(p.Domain)) {
		return "", false, errUnauthenticated
	}
	switch method = id.Methods[0]; method {
	case "password":
		if id.Password == nil {
			return "", false, errf(400, "password method requires a password object")
		}
		u := id.Password.User
		if !(u.ID == UserID || u.ID == "" && u.Name == Username && domainMatches(u.Domain)) || u.Password != Password {
			return "", false, errUnauthenticated
		}
		return method, scope.Project != nil, nil
	case "application_credential":
		ac := id.ApplicationCredential
		if ac == nil || ac.ID != AppCredID || ac.Secret != AppCredSecret {
			return "", false, errUnauthenticated
		}
		if scope.Project != nil {
			return "", false, errUnauthenticated
		}
		return method, true, nil // application credentials are always scoped to their project
	case "token":
		if id.Token == nil || !s.tokenValid(id.Token.ID) {
			return "", false, errUnauthenticated
		}
		return method, scope.Project != nil, nil
	}
	return "", false, errf(401, "unsupported authentication method %q", method)
}

func (s *Sim) issueToken(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if !decodeOrFail(w, r, serviceIdentity, &req) {
		return
	}
	method, scoped, e := s.authenticate(&req)
	if e != nil {
		writeError(w, serviceIdentity, e)
		return
	}
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	token := "gAAAA" + hex.EncodeToString(buf)
	now := time.Now()
	s.mu.Lock()
	expires := now.Add(s.opts.TokenTTL)
	s.st.tokens[token] = expires
	s.mu.Unlock()
	w.Header().Set("X-Subject-Token", token)
	writeJSON(w, http.StatusCreated, map[string]any{"token": s.tokenBody(method, scoped, now, expires)})
}

func (s *Sim) showToken(w http.ResponseWriter, r *http.Request) {
	subject := r.Header.Get("X-Subject-Token")
	s.mu.Lock()
	expires, ok := s.st.tokens[subject]
	s.mu.Unlock()
	if !ok || time.Now().After(expires) {
		writeError(w, serviceIdentity, errf(404, "Could not find token: %s.", subject))
		return
	}
	w.Header().Set("X-Subject-Token", subject)
	writeJSON(w, http.StatusOK, map[string]any{"token": s.tokenBody("token", true, expires.Add(-s.opts.TokenTTL), expires)})
}

func (s *Sim) revokeToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delete(s.st.tokens, r.Header.Get("X-Subject-Token"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) tokenValid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.st.tokens[token]
	return ok && time.Now().Before(exp)
}

// ExpireTokens makes every issued token invalid, as if they had all reached their expiry.
func (s *Sim) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.tokens = map[string]time.Time{}
}

func (s *Sim) tokenBody(method string, scoped bool, issued, expires time.Time) map[string]any {
	domain := map[string]any{"id": DomainID, "name": DomainName}
	body := map[string]any{
		"methods":    []string{method},
		"issued_at":  issued.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"expires_at": expires.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"user":       map[string]any{"id": UserID, "name": Username, "domain": domain, "password_expires_at": nil},
		"audit_ids":  []string{"sim"},
	}
	if !scoped {
		return body
	}
	body["project"] = map[string]any{"id": ProjectID, "name": ProjectName, "domain": domain}
	body["roles"] = []any{map[string]any{"id": "member", "name": "member"}}
	body["is_domain"] = false
	if method == "application_credential" {
		body["application_credential"] = map[string]any{"id": AppCredID, "name": "slipway", "restricted": true}
	}
	body["catalog"] = s.catalog()
	return body
}

func (s *Sim) catalog() []any {
	base := s.st.baseURL
	entry := func(typ, name, url string) map[string]any {
		var eps []any
		for _, iface := range []string{"public", "internal"} {
			eps = append(eps, map[string]any{"id": name + "-" + iface, "interface": iface,
				"region": s.opts.Region, "region_id": s.opts.Region, "url": url})
		}
		return map[string]any{"id": name, "type": typ, "name": name, "endpoints": eps}
	}
	return []any{
		entry("identity", "keystone", base+"/identity"),
		entry("compute", "nova", base+"/compute/v2.1"),
		entry("network", "neutron", base+"/network"),
		entry("image", "glance", base+"/image"),
		entry("block-storage", "cinder", base+"/volume/v3/"+ProjectID),
		entry("load-balancer", "octavia", base+octaviaRoot),
	}
}
