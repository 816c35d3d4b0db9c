package openstacktest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const glanceBase = "/image/v2"

// Glance's list limits: limit_param_default and api_limit_max.
const (
	glanceDefaultLimit = 25
	glanceMaxLimit     = 1000
)

func (s *Sim) imageRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/image", s.imageVersions)
	mux.HandleFunc("GET /image/versions", s.imageVersions)
	mux.HandleFunc("GET "+glanceBase+"/images", s.listImages)
	mux.HandleFunc("POST "+glanceBase+"/images", s.createImage)
	mux.HandleFunc("GET "+glanceBase+"/images/{id}", s.getImage)
	mux.HandleFunc("PATCH "+glanceBase+"/images/{id}", s.patchImage)
	mux.HandleFunc("DELETE "+glanceBase+"/images/{id}", s.deleteImage)
	mux.HandleFunc("PUT "+glanceBase+"/images/{id}/file", s.uploadImage)
	mux.HandleFunc("PUT "+glanceBase+"/images/{id}/tags/{tag}", s.imageTag(true))
	mux.HandleFunc("DELETE "+glanceBase+"/images/{id}/tags/{tag}", s.imageTag(false))
	mux.HandleFunc("/image/", notFound(serviceImage))
}

// renderImage renders an image as Glance v2 does: core attributes, then every additional
// property as a top-level string.
func renderImage(im *Image) map[string]any {
	m := map[string]any{}
	for k, v := range im.Properties {
		m[k] = v
	}
	var checksum, algo, hash, size any
	if im.Status == "active" {
		checksum, algo, hash, size = im.Checksum, "sha512", im.HashValue, im.Size
	}
	maps.Copy(m, map[string]any{
		"id": im.ID, "name": nullable(im.Name), "status": im.Status, "visibility": im.Visibility,
		"protected": im.Protected, "os_hidden": im.Hidden, "min_disk": im.MinDisk, "min_ram": im.MinRAM,
		"size": size, "virtual_size": nil, "disk_format": nullable(im.DiskFormat),
		"container_format": nullable(im.ContainerFormat), "checksum": checksum, "os_hash_algo": algo,
		"os_hash_value": hash, "owner": ProjectID, "tags": append([]string{}, im.Tags...),
		"created_at": ts(im.Created), "updated_at": ts(im.Updated),
		"self": "/v2/images/" + im.ID, "file": "/v2/images/" + im.ID + "/file", "schema": "/v2/schemas/image"})
	return m
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// imageFilter builds the predicate of Glance's list filters. Values may use the "in:" operator.
func imageFilter(q url.Values) func(*Image) bool {
	in := func(key, have string) bool {
		v := q.Get(key)
		if v == "" {
			return true
		}
		if list, ok := strings.CutPrefix(v, "in:"); ok {
			return slices.Contains(strings.Split(list, ","), have)
		}
		return v == have
	}
	visibility := q.Get("visibility")
	hidden := strings.EqualFold(q.Get("os_hidden"), "true")
	tags := q["tag"]
	return func(im *Image) bool {
		switch {
		case !in("name", im.Name), !in("id", im.ID), !in("status", im.Status),
			!in("disk_format", im.DiskFormat), !in("container_format", im.ContainerFormat),
			!in("owner", ProjectID), im.Hidden != hidden:
			return false
		case visibility == "" && im.Visibility == "community",
			visibility != "" && visibility != "all" && visibility != im.Visibility:
			return false
		case q.Get("protected") != "" && strconv.FormatBool(im.Protected) != strings.ToLower(q.Get("protected")):
			return false
		}
		for _, t := range tags {
			if !slices.Contains(im.Tags, t) {
				return false
			}
		}
		return true
	}
}

// imageSort reads sort_key/sort_dir or sort=key:dir,... into a comparison; the default is
// Glance's created_at desc, with id as the tie breaker.
func imageSort(q url.Values) (func(a, b *Image) int, *apiError) {
	type key struct {
		name string
		desc bool
	}
	var keys []key
	if v := q.Get("sort"); v != "" {
		for _, part := range strings.Split(v, ",") {
			name, dir, _ := strings.Cut(part, ":")
			keys = append(keys, key{name, dir != "asc"})
		}
	} else {
		dirs := q["sort_dir"]
		for i, name := range q["sort_key"] {
			desc := true
			if i < len(dirs) {
				desc = dirs[i] != "asc"
			} else if len(dirs) == 1 {
				desc = dirs[0] != "asc"
			}
			keys = append(keys, key{name, desc})
		}
	}
	keys = append(keys, key{"created_at", true}, key{"id", true})
	fields := map[string]func(*Image) string{
		"name": func(i *Image) string { return i.Name }, "id": func(i *Image) string { return i.ID },
		"status":     func(i *Image) string { return i.Status },
		"created_at": func(i *Image) string { return fmt.Sprintf("%020d", i.seq) },
		"updated_at": func(i *Image) string { return ts(i.Updated) },
		"size":       func(i *Image) string { return fmt.Sprintf("%020d", i.Size) },
		"min_disk":   func(i *Image) string { return fmt.Sprintf("%020d", i.MinDisk) },
		"visibility": func(i *Image) string { return i.Visibility },
	}
	for _, k := range keys {
		if fields[k.name] == nil {
			return nil, errf(400, "Invalid sort key: %s. It should be one of the following: %s.", k.name,
				strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
	}
	return func(a, b *Image) int {
		for _, k := range keys {
			c := cmp.Compare(fields[k.name](a), fields[k.name](b))
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}, nil
}

func (s *Sim) listImages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := glanceDefaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, serviceImage, errf(400, "limit param must be positive"))
			return
		}
		limit = min(n, glanceMaxLimit)
	}
	order, e := imageSort(q)
	if e != nil {
		writeError(w, serviceImage, e)
		return
	}
	match := imageFilter(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*Image
	for _, im := range s.st.images {
		if match(im) {
			all = append(all, im)
		}
	}
	slices.SortFunc(all, order)
	if marker := q.Get("marker"); marker != "" {
		if s.st.images[marker] == nil {
			writeError(w, serviceImage, errf(400, "No image found with ID %s", marker))
			return
		}
		// The page starts after the marker's place in the order, whether or not it matches.
		m := s.st.images[marker]
		if i := slices.IndexFunc(all, func(im *Image) bool { return order(im, m) > 0 }); i >= 0 {
			all = all[i:]
		} else {
			all = nil
		}
	}
	out := []any{}
	for _, im := range all[:min(limit, len(all))] {
		out = append(out, renderImage(im))
	}
	body := map[string]any{"images": out, "schema": "/v2/schemas/images", "first": "/v2/images"}
	if len(out) > 0 && len(out) == limit {
		next := url.Values{}
		maps.Copy(next, q)
		next.Set("marker", all[limit-1].ID)
		body["next"] = "/v2/images?" + next.Encode()
	}
	writeJSON(w, http.StatusOK, body)
}

// imageFor finds the image of the request's URL, or answers 404. Callers hold s.mu.
func (s *Sim) imageFor(w http.ResponseWriter, r *http.Request) *Image {
	im, ok := s.st.images[r.PathValue("id")]
	if !ok {
		writeError(w, serviceImage, errf(404, "No image found with ID %s", r.PathValue("id")))
	}
	return im
}

func (s *Sim) getImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.imageFor(w, r); im != nil {
		writeJSON(w, http.StatusOK, renderImage(im))
	}
}
