package openstacktest

import (
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const cinderBase = "/volume/v3/{project}"

func (s *Sim) volumeRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/volume", s.volumeVersions)
	mux.HandleFunc("GET "+cinderBase+"/volumes", s.listVolumes)
	mux.HandleFunc("GET "+cinderBase+"/volumes/detail", s.listVolumes)
	mux.HandleFunc("GET "+cinderBase+"/volumes/{id}", s.getVolume)
	mux.HandleFunc("DELETE "+cinderBase+"/volumes/{id}", s.deleteVolume)
	mux.HandleFunc("POST "+cinderBase+"/volumes", s.createVolume)
	mux.HandleFunc("PUT "+cinderBase+"/volumes/{id}", s.updateVolume)
	mux.HandleFunc("GET "+cinderBase+"/os-availability-zone", s.volumeAvailabilityZones)
	mux.HandleFunc("GET "+cinderBase+"/os-quota-sets/{target}", s.showVolumeQuota)
	mux.HandleFunc("GET "+cinderBase+"/os-quota-sets/{target}/defaults", s.showVolumeQuota)
	mux.HandleFunc("GET "+cinderBase+"/limits", s.volumeLimits)
	mux.HandleFunc("GET "+cinderBase+"/types", s.listVolumeTypes)
	mux.HandleFunc("GET "+cinderBase+"/types/{id}", s.getVolumeType)
	mux.HandleFunc("/volume/", notFound(serviceVolume))
}

func (s *Sim) volumeVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": []any{map[string]any{
		"id": "v3.0", "status": "CURRENT", "version": fmt.Sprintf("3.%d", cinderMaxVersion), "min_version": "3.0",
		"updated": "2023-08-31T00:00:00Z",
		"links":   []any{map[string]any{"rel": "self", "href": s.st.baseURL + "/volume/v3/"}}}}})
}

// checkProject rejects URLs for another project, as Cinder does.
func checkProject(w http.ResponseWriter, r *http.Request) bool {
	if r.PathValue("project") != ProjectID {
		writeError(w, serviceVolume, errf(400, "Malformed request url"))
		return false
	}
	return true
}

// newVolume records a volume. Callers hold s.mu.
func (s *Sim) newVolume(name string, size int, volumeType, imageID string) *Volume {
	if volumeType == "" {
		volumeType = "__DEFAULT__"
	} else if t := s.volumeTypeByRef(volumeType); t != nil {
		volumeType = t.Name
	}
	now := time.Now()
	v := &Volume{ID: newID(), Name: name, ProjectID: ProjectID, Status: "available", Size: size,
		VolumeType: volumeType, ImageID: imageID, AvailabilityZone: AvailabilityZone,
		Metadata: map[string]string{}, Created: now, Updated: now, seq: s.st.next()}
	s.st.volumes[v.ID] = v
	return v
}

func (s *Sim) volumeTypeByRef(ref string) *VolumeType {
	if t, ok := s.st.volumetypes[ref]; ok {
		return t
	}
	for _, t := range s.st.volumetypes {
		if t.Name == ref {
			return t
		}
	}
	return nil
}

func renderVolume(v *Volume) map[string]any {
	attachments := []any{}
	if v.ServerID != "" {
		attachments = append(attachments, map[string]any{"id": v.ID, "volume_id": v.ID,
			"server_id": v.ServerID, "attachment_id": v.ID + "-attachment", "device": v.Device,
			"host_name": nil, "attached_at": v.Updated.UTC().Format(isoMicros)})
	}
	bootable := "false"
	if v.Bootable {
		bootable = "true"
	}
	m := map[string]any{
		"id": v.ID, "name": v.Name, "status": v.Status, "size": v.Size, "volume_type": v.VolumeType,
		"availability_zone": v.AvailabilityZone, "bootable": bootable, "attachments": attachments,
		"metadata": maps.Clone(v.Metadata), "multiattach": false, "encrypted": false, "description": nullable(v.Description),
		"os-vol-tenant-attr:tenant_id": v.ProjectID, "user_id": UserID, "snapshot_id": nil,
		"source_volid": nil, "replication_status": nil, "consistencygroup_id": nil,
		"created_at": v.Created.UTC().Format(isoMicros), "updated_at": v.Updated.UTC().Format(isoMicros)}
	if v.ImageID != "" {
		m["volume_image_metadata"] = map[string]any{"image_id": v.ImageID}
	}
	return m
}

func (s *Sim) listVolumes(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, v := range sortedBySeq(s.st.volumes, func(v *Volume) uint64 { return v.seq }) {
		if n := q.Get("name"); n != "" && v.Name != n {
			continue
		}
		if st := q.Get("status"); st != "" && v.Status != st {
			continue
		}
		out = append(out, renderVolume(v))
	}
	writeJSON(w, http.StatusOK, map[string]any{"volumes": out})
}

// volumeFor finds the volume of the request's URL, or answers 404. Callers hold s.mu.
func (s *Sim) volumeFor(w http.ResponseWriter, r *http.Request) *Volume {
	v, ok := s.st.volumes[r.PathValue("id")]
	if !ok {
		writeError(w, serviceVolume, errf(404, "Volume %s could not be found.", r.PathValue("id")))
	}
	return v
}

func (s *Sim) getVolume(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumeFor(w, r)
	if v == nil {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"volume": renderVolume(v)})
}

func (s *Sim) deleteVolume(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumeFor(w, r)
	if v == nil {
		return
	}
	if v.Status == "in-use" || v.ServerID != "" {
		writeError(w, serviceVolume, errf(400, "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer."))
		return
	}
	delete(s.st.volumes, v.ID)
	w.WriteHeader(http.StatusAccepted)
}

func renderVolumeType(t *VolumeType) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "description": nil, "is_public": true,
		"os-volume-type-access:is_public": true, "extra_specs": map[string]any{}, "qos_specs_id": nil}
}

func (s *Sim) listVolumeTypes(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	for _, t := range sortedBySeq(s.st.volumetypes, func(t *VolumeType) uint64 { return t.seq }) {
		out = append(out, renderVolumeType(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"volume_types": out})
}

// getVolumeType accepts a name or an ID, as Cinder does.
func (s *Sim) getVolumeType(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.volumeTypeByRef(r.PathValue("id"))
	if t == nil {
		writeError(w, serviceVolume, errf(404, "Volume type %s could not be found.", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"volume_type": renderVolumeType(t)})
}

// Cinder's microversions: 3.0 to cinderMaxVersion.
const cinderMaxVersion = 71

// negotiateVolumeVersion checks an "OpenStack-API-Version: volume 3.N" header and echoes the
// version served, as Cinder does.
func negotiateVolumeVersion(w http.ResponseWriter, r *http.Request) *apiError {
	v := "3.0"
	if h, ok := strings.CutPrefix(r.Header.Get("OpenStack-API-Version"), "volume "); ok {
		v = strings.TrimSpace(h)
		if v == "latest" {
			v = fmt.Sprintf("3.%d", cinderMaxVersion)
		}
		major, minor, _ := strings.Cut(v, ".")
		n, err := strconv.Atoi(minor)
		if major != "3" || err != nil || n < 0 {
			return errf(400, "Invalid API version request: %s", v)
		}
		if n > cinderMaxVersion {
			return errf(406, "Version %s is not supported by the API. Minimum is 3.0 and maximum is 3.%d.", v, cinderMaxVersion)
		}
	}
	w.Header().Set("OpenStack-API-Version", "volume "+v)
	w.Header().Set("Vary", "OpenStack-API-Version")
	return nil
}
