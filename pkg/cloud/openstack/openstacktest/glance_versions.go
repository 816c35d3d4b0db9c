package openstacktest

import (
	"fmt"
	"net/http"
)

// glanceVersions are the Images API versions Glance lists, newest first; all are served by v2.
var glanceVersions = func() []string {
	var vs []string
	for minor := 16; minor >= 0; minor-- {
		vs = append(vs, fmt.Sprintf("v2.%d", minor))
	}
	return vs
}()

// handleRoot serves a service's version document at its root with and without the trailing
// slash: clients discover from the catalog URL as it is, and a redirect with a relative
// Location (what ServeMux would answer) breaks keystoneauth's discovery.
func handleRoot(mux *http.ServeMux, root string, h http.HandlerFunc) {
	mux.HandleFunc("GET "+root, h)
	mux.HandleFunc("GET "+root+"/{$}", h)
}

// imageVersions is Glance's answer to any unversioned URL: 300 Multiple Choices with every
// version; GET /versions answers the same document with 200.
func (s *Sim) imageVersions(w http.ResponseWriter, r *http.Request) {
	vs := []any{}
	for i, v := range glanceVersions {
		status := "SUPPORTED"
		if i == 0 {
			status = "CURRENT"
		}
		vs = append(vs, map[string]any{"id": v, "status": status,
			"links": []any{map[string]any{"rel": "self", "href": s.st.baseURL + glanceBase + "/"}}})
	}
	status := http.StatusMultipleChoices
	if r.URL.Path == "/image/versions" {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"versions": vs})
}
