package openstacktest

import (
	"net/http"
	"slices"
	"time"
)

// Neutron's limits of the tag extension.
const (
	maxNeutronTags   = 50
	maxNeutronTagLen = 255
)

// taggable is the tags, revision and update time of one Neutron resource.
type taggable struct {
	kind    string
	tags    *[]string
	rev     *int
	updated *time.Time
}

// taggableOf finds a resource by its URL collection and ID. Callers hold s.mu.
func (s *Sim) taggableOf(collection, id string) (taggable, *apiError) {
	std := func(kind string, n *neutronStd) taggable { return taggable{kind, &n.Tags, &n.Revision, &n.Updated} }
	var t taggable
	found := false
	switch collection {
	case "networks":
		if n := s.st.networks[id]; n != nil {
			t, found = std("network", &n.neutronStd), true
		}
	case "subnets":
		if sn := s.st.subnets[id]; sn != nil {
			t, found = std("subnet", &sn.neutronStd), true
		}
	case "routers":
		if rt := s.st.routers[id]; rt != nil {
			t, found = std("router", &rt.neutronStd), true
		}
	case "security-groups":
		if g := s.st.secgroups[id]; g != nil {
			t, found = std("security_group", &g.neutronStd), true
		}
	case "ports":
		if p := s.st.ports[id]; p != nil {
			t, found = taggable{"port", &p.Tags, &p.Revision, &p.Updated}, true
		}
	case "floatingips":
		if f := s.st.fips[id]; f != nil {
			t, found = taggable{"floatingip", &f.Tags, &f.Revision, &f.Updated}, true
		}
	default:
		return t, neutronErr(404, "HTTPNotFound", "The resource could not be found. (%s is not a taggable collection of this cloud)", collection)
	}
	if !found {
		kind := map[string]string{"networks": "network", "subnets": "subnet", "routers": "router",
			"security-groups": "security_group", "ports": "port", "floatingips": "floatingip"}[collection]
		return t, neutronNotFound(kind, id)
	}
	return t, nil
}

func (t taggable) changed() {
	*t.rev++
	*t.updated = time.Now()
}

func validNeutronTag(tag string) *apiError {
	if tag == "" || len(tag) > maxNeutronTagLen {
		return neutronErr(400, "HTTPBadRequest", "Invalid input for operation: '%s' is not a valid tag (1 to %d characters).", tag, maxNeutronTagLen)
	}
	return nil
}

func (s *Sim) neutronTagRoutes(mux *http.ServeMux) {
	base := neutronBase + "/{collection}/{id}/tags"
	mux.HandleFunc("GET "+base, s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		writeJSON(w, http.StatusOK, map[string]any{"tags": append([]string{}, *t.tags...)})
		return nil
	}))
	mux.HandleFunc("PUT "+base, s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		var body struct {
			Tags []string `json:"tags"`
		}
		if e := decodeBody(r, &body); e != nil {
			return neutronErr(400, "HTTPBadRequest", "%s", e.message)
		}
		if len(body.Tags) > maxNeutronTags {
			return neutronErr(400, "TagLimitExceeded", "Number of tags exceeds the limit %d.", maxNeutronTags)
		}
		for _, tag := range body.Tags {
			if e := validNeutronTag(tag); e != nil {
				return e
			}
		}
		*t.tags = dedupe(body.Tags)
		t.changed()
		writeJSON(w, http.StatusOK, map[string]any{"tags": append([]string{}, *t.tags...)})
		return nil
	}))
	mux.HandleFunc("DELETE "+base, s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		*t.tags = []string{}
		t.changed()
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	mux.HandleFunc("GET "+base+"/{tag}", s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		if !slices.Contains(*t.tags, r.PathValue("tag")) {
			return tagNotFound(r, t)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
	mux.HandleFunc("PUT "+base+"/{tag}", s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		tag := r.PathValue("tag")
		if e := validNeutronTag(tag); e != nil {
			return e
		}
		if !slices.Contains(*t.tags, tag) {
			if len(*t.tags) >= maxNeutronTags {
				return neutronErr(400, "TagLimitExceeded", "Number of tags exceeds the limit %d.", maxNeutronTags)
			}
			*t.tags = append(*t.tags, tag)
			t.changed()
		}
		w.WriteHeader(http.StatusCreated)
		return nil
	}))
	mux.HandleFunc("DELETE "+base+"/{tag}", s.withTaggable(func(w http.ResponseWriter, r *http.Request, t taggable) *apiError {
		tag := r.PathValue("tag")
		if !slices.Contains(*t.tags, tag) {
			return tagNotFound(r, t)
		}
		*t.tags = slices.DeleteFunc(*t.tags, func(x string) bool { return x == tag })
		t.changed()
		w.WriteHeader(http.StatusNoContent)
		return nil
	}))
}

func tagNotFound(r *http.Request, t taggable) *apiError {
	return neutronErr(404, "TagNotFound", "Tag %s could not be found for %s %s.", r.PathValue("tag"), t.kind, r.PathValue("id"))
}

// withTaggable runs h under s.mu with the resource of the URL, after its If-Match check.
func (s *Sim) withTaggable(h func(http.ResponseWriter, *http.Request, taggable) *apiError) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		t, e := s.taggableOf(r.PathValue("collection"), r.PathValue("id"))
		if e == nil && r.Method != http.MethodGet {
			e = checkIfMatch(r, *t.rev)
		}
		if e == nil {
			e = h(w, r, t)
		}
		if e != nil {
			writeError(w, serviceNetwork, e)
		}
	}
}

// dedupe keeps the first of each value, in order.
func dedupe(xs []string) []string {
	out := []string{}
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
