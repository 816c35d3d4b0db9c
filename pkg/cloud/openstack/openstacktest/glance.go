package openstacktest

import (
	"net/http"
)

const glanceBase = "/image/v2"

func (s *Sim) imageRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/image", s.imageVersions)
	mux.HandleFunc("GET /image/versions", s.imageVersions)
	mux.HandleFunc("GET "+glanceBase+"/images", s.listImages)
	mux.HandleFunc("GET "+glanceBase+"/images/{id}", s.getImage)
	mux.HandleFunc("/image/", notFound(serviceImage))
}

func renderImage(im *Image) map[string]any {
	return map[string]any{
		"id": im.ID, "name": im.Name, "status": im.Status, "visibility": "public", "protected": false,
		"os_hidden": false, "min_disk": im.MinDisk, "min_ram": im.MinRAM, "size": im.Size,
		"virtual_size": nil, "disk_format": "qcow2", "container_format": "bare",
		"checksum": "d41d8cd98f00b204e9800998ecf8427e", "owner": ProjectID, "tags": []string{},
		"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
		"self": "/v2/images/" + im.ID, "file": "/v2/images/" + im.ID + "/file",
		"schema": "/v2/schemas/image"}
}

func (s *Sim) listImages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, im := range sortedBySeq(s.st.images, func(i *Image) uint64 { return i.seq }) {
		if v := q.Get("name"); v != "" && im.Name != v {
			continue
		}
		if v := q.Get("id"); v != "" && im.ID != v {
			continue
		}
		if v := q.Get("status"); v != "" && im.Status != v {
			continue
		}
		out = append(out, renderImage(im))
	}
	writeJSON(w, http.StatusOK, map[string]any{"images": out, "schema": "/v2/schemas/images", "first": "/v2/images"})
}

func (s *Sim) getImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	im, ok := s.st.images[r.PathValue("id")]
	if !ok {
		writeError(w, serviceImage, errf(404, "No image found with ID %s", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, renderImage(im))
}
