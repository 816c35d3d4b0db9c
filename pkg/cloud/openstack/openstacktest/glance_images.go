package openstacktest

import (
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Attributes of Glance's image schema that a caller may not set, and the enums it checks.
var (
	imageReadOnly = []string{"checksum", "created_at", "updated_at", "status", "size", "virtual_size",
		"self", "file", "schema", "os_hash_algo", "os_hash_value", "direct_url", "owner"}
	imageReserved    = []string{"deleted", "deleted_at", "location", "locations"}
	imageDiskFormats = []string{"ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"}
	imageContainers  = []string{"ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"}
	imageVisibility  = []string{"public", "private", "shared", "community"}
)

// maxImageProperties is Glance's image_property_quota.
const maxImageProperties = 128

// setImageAttr sets one attribute from a create body or a JSON patch, as Glance's schema
// allows it: core attributes with their types, anything else as a string property.
func setImageAttr(im *Image, key string, raw json.RawMessage) *apiError {
	if slices.Contains(imageReadOnly, key) {
		return errf(403, "Attribute '%s' is read-only.", key)
	}
	if slices.Contains(imageReserved, key) {
		return errf(403, "Attribute '%s' is reserved.", key)
	}
	bad := func() *apiError { return errf(400, "Invalid value %s for image attribute '%s'.", raw, key) }
	var err error
	switch key {
	case "id":
		return errf(403, "Attribute 'id' is read-only.")
	case "name":
		err = json.Unmarshal(raw, &im.Name)
	case "min_disk":
		err = json.Unmarshal(raw, &im.MinDisk)
	case "min_ram":
		err = json.Unmarshal(raw, &im.MinRAM)
	case "protected":
		err = json.Unmarshal(raw, &im.Protected)
	case "os_hidden":
		err = json.Unmarshal(raw, &im.Hidden)
	case "tags":
		err = json.Unmarshal(raw, &im.Tags)
	case "visibility", "disk_format", "container_format":
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return bad()
		}
		allowed, dst := imageVisibility, &im.Visibility
		if key == "disk_format" {
			allowed, dst = imageDiskFormats, &im.DiskFormat
		} else if key == "container_format" {
			allowed, dst = imageContainers, &im.ContainerFormat
		}
		if !slices.Contains(allowed, v) {
			return bad()
		}
		*dst = v
	default:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return errf(400, "Property %s must be a string.", key)
		}
		im.Properties[key] = v
		if len(im.Properties) > maxImageProperties {
			return errf(413, "Attempted: %d, Maximum: %d", len(im.Properties), maxImageProperties)
		}
	}
	if err != nil || im.MinDisk < 0 || im.MinRAM < 0 {
		return bad()
	}
	return nil
}

func (s *Sim) createImage(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if !decodeOrFail(w, r, serviceImage, &body) {
		return
	}
	now := time.Now()
	im := &Image{ID: newID(), Status: "queued", Visibility: "shared", Properties: map[string]string{},
		Created: now, Updated: now}
	if raw, ok := body["id"]; ok {
		if json.Unmarshal(raw, &im.ID) != nil || im.ID == "" {
			writeError(w, serviceImage, errf(400, "Invalid value %s for image attribute 'id'.", raw))
			return
		}
		delete(body, "id")
	}
	for k, raw := range body {
		if e := setImageAttr(im, k, raw); e != nil {
			writeError(w, serviceImage, e)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.images[im.ID] != nil {
		writeError(w, serviceImage, errf(409, "Image with identifier %s already exists!", im.ID))
		return
	}
	im.seq = s.st.next()
	s.st.images[im.ID] = im
	w.Header().Set("Location", s.st.baseURL+glanceBase+"/images/"+im.ID)
	writeJSON(w, http.StatusCreated, renderImage(im))
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// patchImage applies a JSON patch (media type application/openstack-images-v2.1-json-patch)
// to a copy of the image and keeps it only when every operation applied.
func (s *Sim) patchImage(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openstack-images-v2.") {
		writeError(w, serviceImage, errf(415, "Unsupported Content-Type %s", ct))
		return
	}
	var ops []patchOp
	if !decodeOrFail(w, r, serviceImage, &ops) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.imageFor(w, r)
	if im == nil {
		return
	}
	c := *im
	c.Tags, c.Properties = slices.Clone(im.Tags), map[string]string{}
	for k, v := range im.Properties {
		c.Properties[k] = v
	}
	for _, op := range ops {
		key := strings.TrimPrefix(op.Path, "/")
		var e *apiError
		switch op.Op {
		case "add", "replace":
			if _, ok := c.Properties[key]; op.Op == "replace" && !ok && isImageProperty(key) {
				e = errf(409, "Property %s does not exist.", key)
			} else {
				e = setImageAttr(&c, key, op.Value)
			}
		case "remove":
			if _, ok := c.Properties[key]; !ok {
				e = errf(409, "Property %s does not exist.", key)
				if !isImageProperty(key) {
					e = errf(403, "Attribute '%s' is read-only.", key)
				}
			}
			delete(c.Properties, key)
		default:
			e = errf(400, "Operation objects must contain exactly one member named \"add\", \"remove\", or \"replace\".")
		}
		if e != nil {
			writeError(w, serviceImage, e)
			return
		}
	}
	c.Updated = time.Now()
	*im = c
	writeJSON(w, http.StatusOK, renderImage(im))
}

// isImageProperty tells an additional property from a core attribute of the schema.
func isImageProperty(key string) bool {
	switch key {
	case "name", "min_disk", "min_ram", "protected", "os_hidden", "tags", "visibility", "disk_format", "container_format", "id":
		return false
	}
	return !slices.Contains(imageReadOnly, key) && !slices.Contains(imageReserved, key)
}

func (s *Sim) deleteImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	im := s.imageFor(w, r)
	if im == nil {
		return
	}
	if im.Protected {
		writeError(w, serviceImage, errf(403, "Image %s is protected and cannot be deleted.", im.ID))
		return
	}
	delete(s.st.images, im.ID)
	w.WriteHeader(http.StatusNoContent)
}

// uploadImage takes an image's data: the simulator keeps its size and hashes, not the bytes.
func (s *Sim) uploadImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	im := s.imageFor(w, r)
	if im != nil && im.Status != "queued" {
		writeError(w, serviceImage, errf(409, "Image status transition from %s to saving is not allowed", im.Status))
		im = nil
	}
	if im != nil {
		im.Status = "saving"
	}
	s.mu.Unlock()
	if im == nil {
		return
	}
	md, sha := md5.New(), sha512.New()
	n, err := io.Copy(io.MultiWriter(md, sha), r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		im.Status = "queued"
		writeError(w, serviceImage, errf(400, "reading image data: %v", err))
		return
	}
	im.Status, im.Size, im.Updated = "active", n, time.Now()
	im.Checksum, im.HashValue = hex.EncodeToString(md.Sum(nil)), hex.EncodeToString(sha.Sum(nil))
	w.WriteHeader(http.StatusNoContent)
}

// imageTag adds (PUT) or removes (DELETE) one tag.
func (s *Sim) imageTag(add bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		im := s.imageFor(w, r)
		if im == nil {
			return
		}
		tag := r.PathValue("tag")
		has := slices.Contains(im.Tags, tag)
		switch {
		case add && !has:
			im.Tags = append(im.Tags, tag)
		case !add && !has:
			writeError(w, serviceImage, errf(404, "Tag %s not found", tag))
			return
		case !add:
			im.Tags = slices.DeleteFunc(im.Tags, func(t string) bool { return t == tag })
		}
		im.Updated = time.Now()
		w.WriteHeader(http.StatusNoContent)
	}
}
