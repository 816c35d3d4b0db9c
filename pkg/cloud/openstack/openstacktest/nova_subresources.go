package openstacktest

import (
	"net/http"
	"slices"
	"time"
)

// maxServerTags is Nova's limit of tags per server.
const maxServerTags = 50

// serverSubresourceRoutes serves a server's tags (microversion 2.26 and later) and its
// metadata items one by one.
func (s *Sim) serverSubresourceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/tags", s.serverTags(s.listServerTags))
	mux.HandleFunc("PUT "+novaBase+"/servers/{id}/tags", s.serverTags(s.replaceServerTags))
	mux.HandleFunc("DELETE "+novaBase+"/servers/{id}/tags", s.serverTags(s.clearServerTags))
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/tags/{tag}", s.serverTags(s.checkServerTag))
	mux.HandleFunc("PUT "+novaBase+"/servers/{id}/tags/{tag}", s.serverTags(s.addServerTag))
	mux.HandleFunc("DELETE "+novaBase+"/servers/{id}/tags/{tag}", s.serverTags(s.deleteServerTag))
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/metadata/{key}", s.getMetadataItem)
	mux.HandleFunc("PUT "+novaBase+"/servers/{id}/metadata/{key}", s.setMetadataItem)
	mux.HandleFunc("DELETE "+novaBase+"/servers/{id}/metadata/{key}", s.deleteMetadataItem)
}

// serverTags wraps a tag handler: the routes exist from microversion 2.26, and the handler
// runs under s.mu with the server of the URL.
func (s *Sim) serverTags(h func(http.ResponseWriter, *http.Request, *Server) *apiError) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if microversionOf(r) < 26 {
			notFound(serviceCompute)(w, r)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		srv, e := s.serverByID(r.PathValue("id"))
		if e == nil {
			e = h(w, r, srv)
		}
		if e != nil {
			writeError(w, serviceCompute, e)
		}
	}
}

func (s *Sim) listServerTags(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	writeJSON(w, http.StatusOK, map[string]any{"tags": append([]string{}, srv.Tags...)})
	return nil
}

func (s *Sim) replaceServerTags(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	var body struct {
		Tags []string `json:"tags"`
	}
	if e := decodeBody(r, &body); e != nil {
		return e
	}
	if len(body.Tags) > maxServerTags {
		return errf(400, "The number of tags exceeded the per-server limit %d", maxServerTags)
	}
	for _, t := range body.Tags {
		if err := validTag(t); err != nil {
			return errf(400, "Invalid input for field/attribute tags: %v", err)
		}
	}
	srv.Tags, srv.Updated = slices.Compact(slices.Clone(body.Tags)), time.Now()
	return s.listServerTags(w, r, srv)
}

func (s *Sim) clearServerTags(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	srv.Tags, srv.Updated = nil, time.Now()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Sim) checkServerTag(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	if !slices.Contains(srv.Tags, r.PathValue("tag")) {
		return errf(404, "Tag %s could not be found.", r.PathValue("tag"))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// addServerTag answers 201 with the tag's location when it is new, 204 when it was there.
func (s *Sim) addServerTag(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	tag := r.PathValue("tag")
	if err := validTag(tag); err != nil {
		return errf(400, "Invalid input for field/attribute tag: %v", err)
	}
	if slices.Contains(srv.Tags, tag) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if len(srv.Tags) >= maxServerTags {
		return errf(400, "The number of tags exceeded the per-server limit %d", maxServerTags)
	}
	srv.Tags, srv.Updated = append(srv.Tags, tag), time.Now()
	w.Header().Set("Location", s.st.baseURL+novaBase+"/servers/"+srv.ID+"/tags/"+tag)
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Sim) deleteServerTag(w http.ResponseWriter, r *http.Request, srv *Server) *apiError {
	if !slices.Contains(srv.Tags, r.PathValue("tag")) {
		return errf(404, "Tag %s could not be found.", r.PathValue("tag"))
	}
	srv.Tags = slices.DeleteFunc(srv.Tags, func(t string) bool { return t == r.PathValue("tag") })
	srv.Updated = time.Now()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func metadataItemNotFound() *apiError { return errf(404, "Metadata item was not found") }

func (s *Sim) getMetadataItem(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		key := r.PathValue("key")
		v, ok := srv.Metadata[key]
		if !ok {
			writeError(w, serviceCompute, metadataItemNotFound())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"meta": map[string]string{key: v}})
	})
}

// setMetadataItem sets one item; the body must name the key of the URL, and only it.
func (s *Sim) setMetadataItem(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Meta map[string]string `json:"meta"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	key := r.PathValue("key")
	v, ok := body.Meta[key]
	switch {
	case len(body.Meta) > 1:
		writeError(w, serviceCompute, errf(400, "Request body contains too many items"))
		return
	case !ok:
		writeError(w, serviceCompute, errf(400, "Request body and URI mismatch"))
		return
	case len(key) > 255 || len(v) > 255:
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute meta: keys and values must be 1 to 255 characters"))
		return
	}
	s.onServer(w, r, func(srv *Server) {
		if _, has := srv.Metadata[key]; !has && len(srv.Metadata) >= maxServerMetadata {
			writeError(w, serviceCompute, errf(403, "Quota exceeded for metadata_items: Requested 1, but already used %d of %d metadata_items", len(srv.Metadata), maxServerMetadata))
			return
		}
		srv.Metadata[key], srv.Updated = v, time.Now()
		writeJSON(w, http.StatusOK, map[string]any{"meta": map[string]string{key: v}})
	})
}

func (s *Sim) deleteMetadataItem(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		if _, ok := srv.Metadata[r.PathValue("key")]; !ok {
			writeError(w, serviceCompute, metadataItemNotFound())
			return
		}
		delete(srv.Metadata, r.PathValue("key"))
		srv.Updated = time.Now()
		w.WriteHeader(http.StatusNoContent)
	})
}
