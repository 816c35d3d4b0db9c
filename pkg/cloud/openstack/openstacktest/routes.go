package openstacktest

import (
	"net/http"
	"strings"
	"time"
)

// CallStats counts the API calls the Sim answered, including failed and faulted ones.
type CallStats struct {
	Total int
	// Errors counts responses with a status of 400 or more.
	Errors int
	// ByService is keyed by identity, compute, network, image, volume and load-balancer.
	ByService map[string]int
	// ByRoute is keyed by method and route, e.g. "GET /compute/v2.1/servers/{id}".
	ByRoute map[string]int
}

type counters struct {
	total, errors int
	byService     map[string]int
	byRoute       map[string]int
}

// Calls returns a copy of the call counters.
func (s *Sim) Calls() CallStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := CallStats{Total: s.counters.total, Errors: s.counters.errors,
		ByService: map[string]int{}, ByRoute: map[string]int{}}
	for k, v := range s.counters.byService {
		c.ByService[k] = v
	}
	for k, v := range s.counters.byRoute {
		c.ByRoute[k] = v
	}
	return c
}

// ResetCalls zeroes the call counters.
func (s *Sim) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counters = counters{}
}

func (s *Sim) count(service, route string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.counters
	if c.byService == nil {
		c.byService, c.byRoute = map[string]int{}, map[string]int{}
	}
	c.total++
	if status >= 400 {
		c.errors++
	}
	c.byService[service]++
	c.byRoute[route]++
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// routes registers every API and wraps them in the behaviour common to all calls: latency,
// fault injection, token checks, microversion negotiation and counting.
func (s *Sim) routes() http.Handler {
	mux := http.NewServeMux()
	s.identityRoutes(mux)
	s.computeRoutes(mux)
	s.networkRoutes(mux)
	s.imageRoutes(mux)
	s.volumeRoutes(mux)
	s.loadBalancerRoutes(mux)
	s.controlRoutes(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		service := serviceOf(r.URL.Path)
		if service == serviceControl {
			mux.ServeHTTP(w, r)
			if r.Method != http.MethodGet {
				s.networkChanged()
			}
			return
		}
		s.mu.Lock()
		latency, logf, down := s.opts.Latency, s.opts.Logf, s.st.down
		s.mu.Unlock()
		if down {
			dropConnection(w)
			return
		}
		if latency > 0 {
			t := time.NewTimer(latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		_, pattern := mux.Handler(r)
		route := r.Method + " " + strings.TrimPrefix(pattern, r.Method+" ")
		if pattern == "" {
			route = r.Method + " " + r.URL.Path
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if r.Method != http.MethodGet && rec.status < 400 && service != serviceIdentity {
				s.networkChanged()
			}
			s.count(service, route, rec.status)
			if logf != nil {
				logf("openstack-sim: %s %s -> %d", r.Method, r.URL.RequestURI(), rec.status)
			}
		}()
		if e := s.injectFault(service, r); e != nil {
			writeError(rec, service, e)
			return
		}
		if needsToken(r) && !s.tokenValid(r.Header.Get("X-Auth-Token")) {
			writeError(rec, service, errf(401, "The request you have made requires authentication."))
			return
		}
		if service == serviceCompute {
			var e *apiError
			if r, e = negotiateMicroversion(rec, r, s.opts.MaxMicroversion); e != nil {
				writeError(rec, service, e)
				return
			}
		}
		if service == serviceVolume {
			if e := negotiateVolumeVersion(rec, r); e != nil {
				writeError(rec, service, e)
				return
			}
		}
		mux.ServeHTTP(rec, r)
	})
}

// needsToken: everything but authentication itself and the version documents needs a token.
func needsToken(r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodPost && p == "/identity/v3/auth/tokens" {
		return false
	}
	if p == octaviaRoot {
		return r.Method != http.MethodGet
	}
	switch p {
	case "/identity", "/identity/v3", "/compute", "/compute/v2.1", "/network", "/network/v2.0", "/image",
		"/image/versions", "/volume", "/volume/v3":
		return r.Method != http.MethodGet
	}
	return true
}

// notFound is the fallback for unknown URLs of a service: a 404 in the service's error shape,
// as OpenStack answers a route it does not have, whose message names the call.
func notFound(service string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeError(w, service, errf(404, "The resource could not be found. (%s %s is not served by this cloud)", r.Method, r.URL.Path))
	}
}

// SetDown makes the cloud unreachable (true): every API connection is closed without an
// answer, as when the API's load balancer is gone. The control API keeps working.
func (s *Sim) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.down = down
}

func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}
