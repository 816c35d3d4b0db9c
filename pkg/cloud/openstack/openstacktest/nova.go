package openstacktest

import (
	"fmt"
	"net/http"
)

const novaBase = "/compute/v2.1"

func (s *Sim) computeRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/compute", s.computeVersions)
	mux.HandleFunc("GET "+novaBase+"/{$}", s.computeVersion)
	mux.HandleFunc("GET "+novaBase, s.computeVersion)
	mux.HandleFunc("POST "+novaBase+"/servers", s.createServer)
	mux.HandleFunc("GET "+novaBase+"/servers", s.listServers(false))
	mux.HandleFunc("GET "+novaBase+"/servers/detail", s.listServers(true))
	mux.HandleFunc("GET "+novaBase+"/servers/{id}", s.getServer)
	mux.HandleFunc("DELETE "+novaBase+"/servers/{id}", s.deleteServer)
	mux.HandleFunc("PUT "+novaBase+"/servers/{id}", s.updateServer)
	mux.HandleFunc("POST "+novaBase+"/servers/{id}/action", s.serverAction)
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/metadata", s.getMetadata)
	mux.HandleFunc("PUT "+novaBase+"/servers/{id}/metadata", s.setMetadata(true))
	mux.HandleFunc("POST "+novaBase+"/servers/{id}/metadata", s.setMetadata(false))
	mux.HandleFunc("GET "+novaBase+"/os-availability-zone", s.listAvailabilityZones)
	mux.HandleFunc("GET "+novaBase+"/os-availability-zone/detail", novaPolicyDenied("os-availability-zone:detail"))
	s.flavorRoutes(mux)
	s.serverGroupRoutes(mux)
	s.keypairRoutes(mux)
	s.novaQuotaRoutes(mux)
	s.serverSubresourceRoutes(mux)
	s.attachmentRoutes(mux)
	mux.HandleFunc("/compute/", notFound(serviceCompute))
}

func (s *Sim) computeV21Doc() map[string]any {
	return map[string]any{
		"id": "v2.1", "status": "CURRENT", "version": s.opts.MaxMicroversion, "min_version": "2.1",
		"updated": "2013-07-23T11:33:21Z",
		"links":   []any{map[string]any{"rel": "self", "href": s.st.baseURL + novaBase + "/"}},
	}
}

func (s *Sim) computeVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []any{s.computeV21Doc()}})
}

func (s *Sim) computeVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"version": s.computeV21Doc()})
}

func (s *Sim) link(path string) []any {
	return []any{
		map[string]any{"rel": "self", "href": s.st.baseURL + novaBase + path},
		map[string]any{"rel": "bookmark", "href": s.st.baseURL + "/compute" + path},
	}
}

// listAvailabilityZones serves the one zone; the detailed list is admin-only in Nova's policy.
func (s *Sim) listAvailabilityZones(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": []any{map[string]any{
		"zoneName": AvailabilityZone, "zoneState": map[string]any{"available": true}, "hosts": nil}}})
}

// serverByID finds a live server; callers hold s.mu.
func (s *Sim) serverByID(id string) (*Server, *apiError) {
	srv, ok := s.st.servers[id]
	if !ok {
		return nil, errf(404, "Instance %s could not be found.", id)
	}
	return srv, nil
}

func quotaExceeded(resource string, requested, used, limit int) *apiError {
	return errf(403, "Quota exceeded for %s: Requested %d, but already used %d of %d %s", resource, requested, used, limit, resource)
}

func (s *Sim) checkComputeQuota(f *Flavor) *apiError {
	q := s.st.quota
	cores, ram := 0, 0
	for _, srv := range s.st.servers {
		if fl := s.st.flavors[srv.FlavorID]; fl != nil {
			cores += fl.VCPUs
			ram += fl.RAM
		}
	}
	switch n := len(s.st.servers); {
	case q.Instances > 0 && n+1 > q.Instances:
		return quotaExceeded("instances", 1, n, q.Instances)
	case q.Cores > 0 && cores+f.VCPUs > q.Cores:
		return quotaExceeded("cores", f.VCPUs, cores, q.Cores)
	case q.RAMMiB > 0 && ram+f.RAM > q.RAMMiB:
		return quotaExceeded("ram", f.RAM, ram, q.RAMMiB)
	}
	return nil
}

func validTag(t string) error {
	if t == "" || len(t) > 60 {
		return fmt.Errorf("tag %q must be 1 to 60 characters", t)
	}
	for _, c := range t {
		if c == '/' || c == ',' {
			return fmt.Errorf("tag %q must not contain '/' or ','", t)
		}
	}
	return nil
}

// onServer runs f under the simulator's lock with the server the request's path names, and
// answers Nova's 404 when there is none.
func (s *Sim) onServer(w http.ResponseWriter, r *http.Request, f func(srv *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	f(srv)
}
