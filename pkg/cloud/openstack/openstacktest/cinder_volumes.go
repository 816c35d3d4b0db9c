package openstacktest

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// volumeRequest is a volume create or update. The sources the simulator cannot copy from
// (snapshots, other volumes, backups, groups) are accepted only as null, as cinderclient sends
// them when unused.
type volumeRequest struct {
	Size             json.RawMessage   `json:"size"`
	Name             *string           `json:"name"`
	Description      *string           `json:"description"`
	VolumeType       *string           `json:"volume_type"`
	AvailabilityZone *string           `json:"availability_zone"`
	Metadata         map[string]string `json:"metadata"`
	ImageRef         *string           `json:"imageRef"`
	Multiattach      *bool             `json:"multiattach"`
	SnapshotID       *string           `json:"snapshot_id"`
	SourceVolID      *string           `json:"source_volid"`
	BackupID         *string           `json:"backup_id"`
	ConsistencyGroup *string           `json:"consistencygroup_id"`
	GroupID          *string           `json:"group_id"`
}

func (s *Sim) createVolume(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	var body struct {
		Volume *volumeRequest `json:"volume"`
	}
	if !decodeOrFail(w, r, serviceVolume, &body) {
		return
	}
	req := body.Volume
	if req == nil {
		writeError(w, serviceVolume, errf(400, "Missing required element 'volume' in request body."))
		return
	}
	size, err := strconv.Atoi(strings.Trim(string(req.Size), `"`))
	switch {
	case err != nil || size < 1:
		writeError(w, serviceVolume, errf(400, "Invalid input for field/attribute size. Value: %s. Size must be an integer of at least 1 GiB", req.Size))
		return
	case req.SnapshotID != nil || req.SourceVolID != nil || req.BackupID != nil || req.ConsistencyGroup != nil || req.GroupID != nil:
		writeError(w, serviceVolume, errf(400, "Invalid input received: the simulator creates volumes from nothing or from an image, not from snapshots, volumes, backups or groups."))
		return
	case req.Multiattach != nil && *req.Multiattach:
		writeError(w, serviceVolume, errf(400, "Invalid input received: multiattach volumes are not simulated."))
		return
	case req.AvailabilityZone != nil && *req.AvailabilityZone != AvailabilityZone:
		writeError(w, serviceVolume, errf(400, "Invalid input received: Availability zone '%s' is invalid.", *req.AvailabilityZone))
		return
	}
	s.mu.Lock()
	v, e := s.addVolume(req, size)
	s.mu.Unlock()
	if e != nil {
		writeError(w, serviceVolume, e)
		return
	}
	id := v["id"].(string)
	s.after(0, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if v := s.st.volumes[id]; v != nil && v.Status == "creating" {
			v.Status, v.Updated = "available", time.Now()
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]any{"volume": v})
}

// addVolume checks a create against types, images and quotas, records the volume in status
// creating and returns it rendered. Callers hold s.mu.
func (s *Sim) addVolume(req *volumeRequest, size int) (map[string]any, *apiError) {
	if req.VolumeType != nil && s.volumeTypeByRef(*req.VolumeType) == nil {
		return nil, errf(404, "Volume type with name %s could not be found.", *req.VolumeType)
	}
	if req.ImageRef != nil {
		if im := s.st.images[*req.ImageRef]; im == nil || im.Status != "active" {
			return nil, errf(400, "Invalid image identifier or unable to access requested image.")
		} else if im.MinDisk > size {
			return nil, errf(400, "Invalid input received: Volume size %dGB cannot be smaller than the image minDisk size %dGB.", size, im.MinDisk)
		}
	}
	if n, q := len(s.st.volumes), s.quotaLimit(serviceVolume, "volumes"); n >= q {
		return nil, errf(413, "VolumeLimitExceeded: Maximum number of volumes allowed (%d) exceeded for quota 'volumes'.", q)
	}
	used := quotaItemNamed(serviceVolume, "gigabytes").usage(s.st)
	if q := s.quotaLimit(serviceVolume, "gigabytes"); used+size > q {
		return nil, errf(413, "VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested %dG, quota is %dG and %dG has been consumed.", size, q, used)
	}
	v := s.newVolume(deref(req.Name), size, deref(req.VolumeType), deref(req.ImageRef))
	v.Description, v.Status, v.Bootable = deref(req.Description), "creating", req.ImageRef != nil
	maps.Copy(v.Metadata, req.Metadata)
	return renderVolume(v), nil
}

// updateVolume changes what Cinder lets a volume update change: name, description, metadata.
func (s *Sim) updateVolume(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	var body struct {
		Volume map[string]json.RawMessage `json:"volume"`
	}
	if !decodeOrFail(w, r, serviceVolume, &body) {
		return
	}
	var req volumeRequest
	for k := range body.Volume {
		if k != "name" && k != "description" && k != "metadata" && k != "display_name" && k != "display_description" {
			writeError(w, serviceVolume, errf(400, "Invalid input for field/attribute volume. Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	raw, _ := json.Marshal(body.Volume)
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceVolume, errf(400, "Invalid input for field/attribute volume: %v", err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumeFor(w, r)
	if v == nil {
		return
	}
	if req.Name != nil {
		v.Name = *req.Name
	}
	if req.Description != nil {
		v.Description = *req.Description
	}
	if req.Metadata != nil {
		v.Metadata = maps.Clone(req.Metadata)
	}
	v.Updated = time.Now()
	writeJSON(w, http.StatusOK, map[string]any{"volume": renderVolume(v)})
}

func (s *Sim) volumeAvailabilityZones(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": []any{map[string]any{
		"zoneName": AvailabilityZone, "zoneState": map[string]any{"available": true}}}})
}

// showVolumeQuota serves the project's quota set, with usage when ?usage=true.
func (s *Sim) showVolumeQuota(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	if r.PathValue("target") != ProjectID {
		writeError(w, serviceVolume, errf(403, "Policy doesn't allow volume_extension:quotas:show to be performed."))
		return
	}
	usage := strings.EqualFold(r.URL.Query().Get("usage"), "true")
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[string]any{"id": ProjectID}
	for _, it := range quotaItemsOf(serviceVolume, 0) {
		if usage {
			set[it.name] = map[string]any{"limit": it.reported(&s.st.quota), "in_use": it.usage(s.st), "reserved": 0, "allocated": 0}
		} else {
			set[it.name] = it.reported(&s.st.quota)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"quota_set": set})
}

func (s *Sim) volumeLimits(w http.ResponseWriter, r *http.Request) {
	if !checkProject(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vols, gbs := quotaItemNamed(serviceVolume, "volumes"), quotaItemNamed(serviceVolume, "gigabytes")
	abs := map[string]any{
		"maxTotalVolumes": vols.reported(&s.st.quota), "totalVolumesUsed": vols.usage(s.st),
		"maxTotalVolumeGigabytes": gbs.reported(&s.st.quota), "totalGigabytesUsed": gbs.usage(s.st),
		"maxTotalSnapshots": -1, "totalSnapshotsUsed": 0, "maxTotalBackups": -1, "totalBackupsUsed": 0,
		"maxTotalBackupGigabytes": -1, "totalBackupGigabytesUsed": 0,
	}
	writeJSON(w, http.StatusOK, map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}
