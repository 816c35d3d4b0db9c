package openstacktest

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
)

func (s *Sim) flavorRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/flavors", s.listFlavors(false))
	mux.HandleFunc("GET "+novaBase+"/flavors/detail", s.listFlavors(true))
	mux.HandleFunc("GET "+novaBase+"/flavors/{id}", s.getFlavor)
	mux.HandleFunc("GET "+novaBase+"/flavors/{id}/os-extra_specs", s.getExtraSpecs)
	mux.HandleFunc("GET "+novaBase+"/flavors/{id}/os-extra_specs/{key}", s.getExtraSpec)
	// Flavors and their extra specs are the operator's: Nova's default policy refuses members.
	mux.HandleFunc("POST "+novaBase+"/flavors", novaPolicyDenied("os-flavor-manage:create"))
	mux.HandleFunc("DELETE "+novaBase+"/flavors/{id}", novaPolicyDenied("os-flavor-manage:delete"))
	mux.HandleFunc("POST "+novaBase+"/flavors/{id}/os-extra_specs", novaPolicyDenied("os-flavor-extra-specs:create"))
	mux.HandleFunc("PUT "+novaBase+"/flavors/{id}/os-extra_specs/{key}", novaPolicyDenied("os-flavor-extra-specs:update"))
	mux.HandleFunc("DELETE "+novaBase+"/flavors/{id}/os-extra_specs/{key}", novaPolicyDenied("os-flavor-extra-specs:delete"))
}

func (s *Sim) renderFlavor(f *Flavor, detail bool, mv microversion) map[string]any {
	m := map[string]any{"id": f.ID, "name": f.Name, "links": s.link("/flavors/" + f.ID)}
	if mv >= 55 {
		m["description"] = nil
	}
	if !detail {
		return m
	}
	m["vcpus"], m["ram"], m["disk"] = f.VCPUs, f.RAM, f.Disk
	m["swap"], m["OS-FLV-EXT-DATA:ephemeral"], m["rxtx_factor"] = "", 0, 1.0
	m["os-flavor-access:is_public"], m["OS-FLV-DISABLED:disabled"] = true, false
	if mv >= 61 {
		m["extra_specs"] = extraSpecs(f)
	}
	return m
}

func extraSpecs(f *Flavor) map[string]string {
	if f.ExtraSpecs == nil {
		return map[string]string{}
	}
	return maps.Clone(f.ExtraSpecs)
}

// listFlavors lists public flavors ordered by ID, with Nova's minDisk/minRam filters and
// limit/marker pagination.
func (s *Sim) listFlavors(detail bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		atLeast := func(key string, have int) bool {
			n, err := strconv.Atoi(q.Get(key))
			return err != nil || have >= n
		}
		limit, e := listLimit(q.Get("limit"))
		if e != nil {
			writeError(w, serviceCompute, e)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		all := sortedBySeq(s.st.flavors, func(f *Flavor) uint64 { return f.seq })
		slices.SortStableFunc(all, func(a, b *Flavor) int { return compareIDs(a.ID, b.ID) })
		if marker := q.Get("marker"); marker != "" {
			i := slices.IndexFunc(all, func(f *Flavor) bool { return f.ID == marker })
			if i < 0 {
				writeError(w, serviceCompute, errf(400, "marker [%s] not found", marker))
				return
			}
			all = all[i+1:]
		}
		out := []any{}
		for _, f := range all {
			if len(out) < limit && atLeast("minDisk", f.Disk) && atLeast("minRam", f.RAM) {
				out = append(out, s.renderFlavor(f, detail, microversionOf(r)))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"flavors": out})
	}
}

// listLimit reads Nova's limit parameter, capped at osapi_max_limit.
func listLimit(v string) (int, *apiError) {
	if v == "" {
		return maxListLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errf(400, "limit must be a non-negative integer")
	}
	return min(n, maxListLimit), nil
}

// compareIDs orders numeric flavor IDs numerically and the rest as strings, numbers first.
func compareIDs(a, b string) int {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return na - nb
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// flavorFor finds the flavor of the request's URL, or answers 404. Callers hold s.mu.
func (s *Sim) flavorFor(w http.ResponseWriter, r *http.Request) *Flavor {
	f, ok := s.st.flavors[r.PathValue("id")]
	if !ok {
		writeError(w, serviceCompute, errf(404, "Flavor %s could not be found.", r.PathValue("id")))
	}
	return f
}

func (s *Sim) getFlavor(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flavorFor(w, r); f != nil {
		writeJSON(w, http.StatusOK, map[string]any{"flavor": s.renderFlavor(f, true, microversionOf(r))})
	}
}

func (s *Sim) getExtraSpecs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flavorFor(w, r); f != nil {
		writeJSON(w, http.StatusOK, map[string]any{"extra_specs": extraSpecs(f)})
	}
}

func (s *Sim) getExtraSpec(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flavorFor(w, r)
	if f == nil {
		return
	}
	key := r.PathValue("key")
	v, ok := f.ExtraSpecs[key]
	if !ok {
		writeError(w, serviceCompute, errf(404, "Flavor %s has no extra specs with key %s.", f.ID, key))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{key: v})
}

// SetFlavorExtraSpecs replaces a flavor's extra specs, as an operator would; members may not.
func (s *Sim) SetFlavorExtraSpecs(id string, specs map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.st.flavors[id]
	if ok {
		f.ExtraSpecs = maps.Clone(specs)
	}
	return ok
}
