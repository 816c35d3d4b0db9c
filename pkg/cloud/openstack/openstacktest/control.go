package openstacktest

import (
	"net/http"
	"time"
)

// The control API under /_sim/ lets tests in another process (the end-to-end suite driving the
// standalone command) inspect and break the simulator. It needs no token.
func (s *Sim) controlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /_sim/state", s.controlState)
	mux.HandleFunc("POST /_sim/faults", s.controlAddFault)
	mux.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /_sim/quota", func(w http.ResponseWriter, r *http.Request) {
		var q Quota
		if controlDecode(w, r, &q) {
			s.SetQuota(q)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("PUT /_sim/timing", s.controlTiming)
	mux.HandleFunc("POST /_sim/fail-next-servers", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Count int    `json:"count"`
			Fault string `json:"fault"`
		}
		if controlDecode(w, r, &req) {
			s.FailNextServers(req.Count, req.Fault)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("POST /_sim/servers/{id}/vanish", func(w http.ResponseWriter, r *http.Request) {
		controlResult(w, s.VanishServer(r.PathValue("id")))
	})
	mux.HandleFunc("POST /_sim/servers/{id}/break", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Fault string `json:"fault"`
		}
		if controlDecode(w, r, &req) {
			controlResult(w, s.BreakServer(r.PathValue("id"), req.Fault))
		}
	})
}

func controlDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	if e := decodeBody(r, v); e != nil {
		writeJSON(w, e.status, map[string]any{"error": e.message})
		return false
	}
	return true
}

func controlResult(w http.ResponseWriter, err error) {
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// State is everything the control API's GET /_sim/state reports.
type State struct {
	Servers     []Server
	Ports       []Port
	FloatingIPs []FloatingIP
	Volumes     []Volume
	// LoadBalancers carry their listeners, pools, members and health monitors.
	LoadBalancers []LoadBalancer
	PeakServers   int
	Calls         CallStats
}

func (s *Sim) controlState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, State{Servers: s.Servers(), Ports: s.Ports(), FloatingIPs: s.FloatingIPs(),
		Volumes: s.Volumes(), LoadBalancers: s.LoadBalancers(), PeakServers: s.PeakServers(), Calls: s.Calls()})
}

// controlFault is Fault with durations as strings ("1s").
type controlFault struct {
	Fault
	RetryAfter string
}

func (s *Sim) controlAddFault(w http.ResponseWriter, r *http.Request) {
	var f controlFault
	if !controlDecode(w, r, &f) {
		return
	}
	if f.RetryAfter != "" {
		d, err := time.ParseDuration(f.RetryAfter)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		f.Fault.RetryAfter = d
	}
	s.InjectFault(f.Fault)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) controlTiming(w http.ResponseWriter, r *http.Request) {
	var req struct{ Latency, BuildTime, DeleteTime, LoadBalancerTime *string }
	if !controlDecode(w, r, &req) {
		return
	}
	for _, f := range []struct {
		v   *string
		set func(time.Duration)
	}{{req.Latency, s.SetLatency}, {req.BuildTime, s.SetBuildTime}, {req.DeleteTime, s.SetDeleteTime},
		{req.LoadBalancerTime, s.SetLoadBalancerTime}} {
		if f.v == nil {
			continue
		}
		d, err := time.ParseDuration(*f.v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		f.set(d)
	}
	w.WriteHeader(http.StatusNoContent)
}
