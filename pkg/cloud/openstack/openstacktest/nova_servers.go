package openstacktest

import (
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxListLimit is Nova's default osapi_max_limit: longer lists are paginated.
const maxListLimit = 1000

func (s *Sim) getServer(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		writeJSON(w, http.StatusOK, map[string]any{"server": s.renderServer(srv, microversionOf(r))})
	})
}

func (s *Sim) listServers(detail bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		match, e := serverFilter(q)
		if e != nil {
			writeError(w, serviceCompute, e)
			return
		}
		limit := maxListLimit
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				writeError(w, serviceCompute, errf(400, "limit must be a non-negative integer"))
				return
			}
			limit = min(n, maxListLimit)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		all := sortedBySeq(s.st.servers, func(v *Server) uint64 { return v.seq })
		slices.Reverse(all) // newest first, as Nova sorts by created_at desc
		if marker := q.Get("marker"); marker != "" {
			i := slices.IndexFunc(all, func(v *Server) bool { return v.ID == marker })
			if i < 0 {
				writeError(w, serviceCompute, errf(400, "marker [%s] not found", marker))
				return
			}
			all = all[i+1:]
		}
		out := []any{}
		var last string
		more := false
		for _, srv := range all {
			if !match(s, srv) {
				continue
			}
			if len(out) == limit {
				more = true
				break
			}
			if detail {
				out = append(out, s.renderServer(srv, microversionOf(r)))
			} else {
				out = append(out, map[string]any{"id": srv.ID, "name": srv.Name, "links": s.link("/servers/" + srv.ID)})
			}
			last = srv.ID
		}
		body := map[string]any{"servers": out}
		if more {
			next := url.Values{}
			for k, v := range q {
				next[k] = v
			}
			next.Set("marker", last)
			path := "/servers"
			if detail {
				path += "/detail"
			}
			body["servers_links"] = []any{map[string]any{"rel": "next",
				"href": s.st.baseURL + novaBase + path + "?" + next.Encode()}}
		}
		writeJSON(w, http.StatusOK, body)
	}
}

// serverFilter implements the list filters Nova offers to project users.
func serverFilter(q url.Values) (func(*Sim, *Server) bool, *apiError) {
	var nameRe, ipRe *regexp.Regexp
	var err error
	if v := q.Get("name"); v != "" {
		if nameRe, err = regexp.Compile(v); err != nil {
			return nil, errf(400, "Invalid filter name: %v", err)
		}
	}
	if v := q.Get("ip"); v != "" {
		if ipRe, err = regexp.Compile(v); err != nil {
			return nil, errf(400, "Invalid filter ip: %v", err)
		}
	}
	split := func(k string) []string {
		if v := q.Get(k); v != "" {
			return strings.Split(v, ",")
		}
		return nil
	}
	tags, tagsAny, notTags, notTagsAny := split("tags"), split("tags-any"), split("not-tags"), split("not-tags-any")
	status, az, flavor, image := strings.ToUpper(q.Get("status")), q.Get("availability_zone"), q.Get("flavor"), q.Get("image")
	return func(s *Sim, srv *Server) bool {
		has := func(t string) bool { return slices.Contains(srv.Tags, t) }
		switch {
		case nameRe != nil && !nameRe.MatchString(srv.Name),
			status != "" && srv.Status != status,
			az != "" && srv.AvailabilityZone != az,
			flavor != "" && srv.FlavorID != flavor,
			image != "" && srv.ImageID != image,
			len(tags) > 0 && !all(tags, has),
			len(tagsAny) > 0 && !slices.ContainsFunc(tagsAny, has),
			len(notTags) > 0 && all(notTags, has),
			len(notTagsAny) > 0 && slices.ContainsFunc(notTagsAny, has):
			return false
		}
		if ipRe != nil {
			for _, id := range srv.PortIDs {
				if p := s.st.ports[id]; p != nil {
					for _, f := range p.FixedIPs {
						if ipRe.MatchString(f.IPAddress) {
							return true
						}
					}
				}
			}
			return false
		}
		return true
	}, nil
}

func all(xs []string, f func(string) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}

func (s *Sim) getMetadata(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		writeJSON(w, http.StatusOK, map[string]any{"metadata": maps.Clone(srv.Metadata)})
	})
}

// setMetadata replaces (PUT) or merges (POST) a server's metadata.
func (s *Sim) setMetadata(replace bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Metadata map[string]string `json:"metadata"`
		}
		if !decodeOrFail(w, r, serviceCompute, &body) {
			return
		}
		s.onServer(w, r, func(srv *Server) {
			if replace {
				srv.Metadata = map[string]string{}
			}
			maps.Copy(srv.Metadata, body.Metadata)
			writeJSON(w, http.StatusOK, map[string]any{"metadata": maps.Clone(srv.Metadata)})
		})
	}
}
