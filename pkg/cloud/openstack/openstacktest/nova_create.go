package openstacktest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serverCreateKeys are the properties Nova's schema accepts in a create request (up to the
// microversions simulated); anything else is a 400, as in Nova.
var serverCreateKeys = map[string]microversion{
	"name": 1, "imageRef": 1, "flavorRef": 1, "networks": 1, "security_groups": 1,
	"availability_zone": 1, "metadata": 1, "user_data": 1, "config_drive": 1,
	"block_device_mapping_v2": 1, "key_name": 1, "min_count": 1, "max_count": 1, "adminPass": 1,
	"accessIPv4": 1, "accessIPv6": 1, "OS-DCF:diskConfig": 1, "personality": 1,
	"return_reservation_id": 1, "description": 19, "tags": 52, "hostname": 90,
}

type networkRequest struct {
	UUID    string `json:"uuid"`
	Port    string `json:"port"`
	FixedIP string `json:"fixed_ip"`
	Tag     string `json:"tag"`
}

type blockDevice struct {
	SourceType          string `json:"source_type"`
	DestinationType     string `json:"destination_type"`
	UUID                string `json:"uuid"`
	BootIndex           any    `json:"boot_index"`
	VolumeSize          int    `json:"volume_size"`
	VolumeType          string `json:"volume_type"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
}

type serverRequest struct {
	Name             string                  `json:"name"`
	ImageRef         string                  `json:"imageRef"`
	FlavorRef        string                  `json:"flavorRef"`
	Networks         json.RawMessage         `json:"networks"`
	SecurityGroups   []struct{ Name string } `json:"security_groups"`
	AvailabilityZone string                  `json:"availability_zone"`
	Metadata         map[string]string       `json:"metadata"`
	UserData         *string                 `json:"user_data"`
	ConfigDrive      any                     `json:"config_drive"`
	BlockDevices     []blockDevice           `json:"block_device_mapping_v2"`
	Tags             []string                `json:"tags"`
	KeyName          string                  `json:"key_name"`
	Hostname         string                  `json:"hostname"`
	MinCount         int                     `json:"min_count"`
	MaxCount         int                     `json:"max_count"`
	Description      *string                 `json:"description"`
	AccessIPv4       string                  `json:"accessIPv4"`
	AccessIPv6       string                  `json:"accessIPv6"`
	Personality      json.RawMessage         `json:"personality"`
	ReservationID    bool                    `json:"return_reservation_id"`
}

func (s *Sim) createServer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Server map[string]json.RawMessage `json:"server"`
		Hints  map[string]any             `json:"os:scheduler_hints"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	mv := microversionOf(r)
	for k := range body.Server {
		if min, ok := serverCreateKeys[k]; !ok || mv < min {
			writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server. Additional properties are not allowed ('%s' was unexpected)", k))
			return
		}
	}
	raw, _ := json.Marshal(body.Server)
	var req serverRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute server: %v", err))
		return
	}
	group, _ := body.Hints["group"].(string)
	s.mu.Lock()
	srv, e := s.buildServer(&req, group, mv)
	var buildTime time.Duration
	if e == nil {
		buildTime = s.opts.BuildTime
	}
	s.mu.Unlock()
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	s.after(buildTime, func() { s.finishBuild(srv.ID) })
	if req.ReservationID {
		writeJSON(w, http.StatusAccepted, map[string]any{"reservation_id": "r-" + srv.ID[:8]})
		return
	}
	w.Header().Set("Location", s.st.baseURL+novaBase+"/servers/"+srv.ID)
	sgs := []any{}
	for _, g := range srv.SecurityGroups {
		sgs = append(sgs, map[string]any{"name": g})
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"server": map[string]any{
		"id": srv.ID, "links": s.link("/servers/" + srv.ID), "OS-DCF:diskConfig": "MANUAL",
		"security_groups": sgs, "adminPass": "sim-admin-pass"}})
}

// buildServer validates a create request the way Nova's API does and records the server with
// its ports and boot volume. Callers hold s.mu.
func (s *Sim) buildServer(req *serverRequest, group string, mv microversion) (*Server, *apiError) {
	st := s.st
	if req.Name == "" || len(req.Name) > 255 {
		return nil, errf(400, "Invalid input for field/attribute name.")
	}
	if req.MinCount > 1 || req.MaxCount > 1 {
		return nil, errf(400, "the simulator creates one server per request")
	}
	if len(req.Personality) > 0 && string(req.Personality) != "[]" && string(req.Personality) != "null" {
		return nil, errf(400, "the simulator does not inject files (personality); use user_data")
	}
	if e := checkServerNaming(req.Description, req.Hostname, req.AccessIPv4, req.AccessIPv6); e != nil {
		return nil, e
	}
	flavor, ok := st.flavors[req.FlavorRef]
	if !ok {
		return nil, errf(400, "Invalid flavorRef provided.")
	}
	bootVolume, e := s.checkBootSource(req, flavor)
	if e != nil {
		return nil, e
	}
	if _, ok := st.keypairs[req.KeyName]; req.KeyName != "" && !ok {
		return nil, errf(400, "Invalid key_name provided.")
	}
	nets, e := s.checkNetworks(req.Networks, mv)
	if e != nil {
		return nil, e
	}
	sgNames, sgIDs, e := s.checkSecurityGroups(req.SecurityGroups)
	if e != nil {
		return nil, e
	}
	if req.AvailabilityZone != "" && req.AvailabilityZone != AvailabilityZone {
		return nil, errf(400, "The requested availability zone is not available")
	}
	if group != "" && st.servergroups[group] == nil {
		return nil, errf(400, "Invalid input for field/attribute os:scheduler_hints: group %s not found", group)
	}
	var userData []byte
	if req.UserData != nil {
		var err error
		if userData, err = base64.StdEncoding.DecodeString(*req.UserData); err != nil {
			return nil, errf(400, "User data needs to be valid base 64.")
		}
		if len(*req.UserData) > 65535 {
			return nil, errf(400, "User data too large. User data must be no larger than 65535 bytes once base64 encoded.")
		}
	}
	for _, t := range req.Tags {
		if err := validTag(t); err != nil {
			return nil, errf(400, "Invalid input for field/attribute tags: %v", err)
		}
	}
	for k, v := range req.Metadata {
		if k == "" || len(k) > 255 || len(v) > 255 {
			return nil, errf(400, "Invalid input for field/attribute metadata: keys and values must be 1 to 255 characters")
		}
	}
	if e := s.checkComputeQuota(flavor); e != nil {
		return nil, e
	}
	now := time.Now()
	srv := &Server{
		ID: newID(), Name: req.Name, ProjectID: ProjectID, Status: "BUILD", FlavorID: flavor.ID,
		ImageID: req.ImageRef, Metadata: map[string]string{}, Tags: slices.Clone(req.Tags), UserData: userData,
		ConfigDrive: truthy(req.ConfigDrive), AvailabilityZone: AvailabilityZone, ServerGroupID: group,
		SecurityGroups: sgNames, KeyName: req.KeyName, Created: now, Updated: now, seq: st.next(),
		Description: deref(req.Description), Hostname: req.Hostname, AccessIPv4: req.AccessIPv4, AccessIPv6: req.AccessIPv6,
	}
	if srv.Hostname == "" {
		srv.Hostname = sanitizeHostname(srv.Name)
	}
	for k, v := range req.Metadata {
		srv.Metadata[k] = v
	}
	// Ports are made last, after every check that can fail, so a rejected request leaves nothing.
	for _, n := range nets {
		p, e := s.attachNetwork(srv, n, sgIDs)
		if e != nil {
			s.releaseServerResources(srv, false)
			return nil, e
		}
		srv.PortIDs = append(srv.PortIDs, p.ID)
	}
	if bootVolume != nil {
		v := s.newVolume(srv.Name+"-boot", bootVolume.VolumeSize, bootVolume.VolumeType, bootVolume.UUID)
		v.Status, v.ServerID, v.Bootable, v.DeleteOnTermination = "in-use", srv.ID, true, bootVolume.DeleteOnTermination
		v.Device = "/dev/vda"
		srv.VolumeIDs = append(srv.VolumeIDs, v.ID)
		srv.ImageID = ""
	}
	if g := st.servergroups[group]; g != nil {
		g.Members = append(g.Members, srv.ID)
	}
	st.servers[srv.ID] = srv
	st.peakServers = max(st.peakServers, len(st.servers))
	return srv, nil
}

// checkBootSource validates imageRef or the boot-from-volume mapping; it returns the mapping.
func (s *Sim) checkBootSource(req *serverRequest, flavor *Flavor) (*blockDevice, *apiError) {
	var boot *blockDevice
	for i := range req.BlockDevices {
		bd := &req.BlockDevices[i]
		if idx, _ := strconv.Atoi(strings.Trim(jsonString(bd.BootIndex), `"`)); idx == 0 && bd.BootIndex != nil {
			boot = bd
			continue
		}
		// Attaching further volumes at boot is not simulated: refused rather than dropped.
		return nil, errf(400, "the simulator boots with at most one block device, the boot volume (boot_index 0)")
	}
	if boot == nil {
		img, ok := s.st.images[req.ImageRef]
		if !ok {
			return nil, errf(400, "Can not find requested image")
		}
		return nil, checkFlavorFits(img, flavor)
	}
	if boot.SourceType != "image" || boot.DestinationType != "volume" {
		return nil, errf(400, "the simulator boots from volume only with source_type image and destination_type volume")
	}
	img, ok := s.st.images[boot.UUID]
	if !ok {
		return nil, errf(400, "Can not find requested image")
	}
	if img.Status != "active" {
		return nil, errf(400, "Image %s is not active.", img.ID)
	}
	if boot.VolumeSize < img.MinDisk {
		return nil, errf(400, "Volume is smaller than the minimum size specified in image metadata. Volume size is %d bytes, minimum size is %d bytes.",
			boot.VolumeSize<<30, img.MinDisk<<30)
	}
	if boot.VolumeType != "" && s.volumeTypeByRef(boot.VolumeType) == nil {
		return nil, errf(400, "Volume type %s could not be found.", boot.VolumeType)
	}
	if q := s.st.quota.Volumes; q > 0 && len(s.st.volumes) >= q {
		return nil, errf(403, "Volume resource quota exceeded")
	}
	return boot, nil
}

func (s *Sim) checkNetworks(raw json.RawMessage, mv microversion) ([]networkRequest, *apiError) {
	var auto string
	var reqs []networkRequest
	if len(raw) == 0 {
		if mv >= 37 {
			return nil, errf(400, "Invalid input for field/attribute networks. Value: None.")
		}
		auto = "auto"
	} else if json.Unmarshal(raw, &auto) != nil {
		if err := json.Unmarshal(raw, &reqs); err != nil {
			return nil, errf(400, "Invalid input for field/attribute networks: %v", err)
		}
	}
	switch auto {
	case "none":
		return nil, nil
	case "auto":
		var internal []*Network
		for _, n := range s.st.networks {
			if !n.External {
				internal = append(internal, n)
			}
		}
		if len(internal) != 1 {
			return nil, errf(409, "Multiple possible networks found, use a Network ID to be more specific.")
		}
		return []networkRequest{{UUID: internal[0].ID}}, nil
	case "":
	default:
		return nil, errf(400, "Invalid input for field/attribute networks.")
	}
	for _, n := range reqs {
		switch {
		case n.Port != "":
			p, ok := s.st.ports[n.Port]
			if !ok {
				return nil, errf(400, "Port id %s could not be found.", n.Port)
			}
			if p.DeviceID != "" {
				return nil, errf(409, "Port %s is still in use.", n.Port)
			}
		case n.UUID != "":
			if _, ok := s.st.networks[n.UUID]; !ok {
				return nil, errf(400, "Network %s could not be found.", n.UUID)
			}
		default:
			return nil, errf(400, "Bad networks format: network uuid is not in proper format")
		}
	}
	return reqs, nil
}

func (s *Sim) checkSecurityGroups(refs []struct{ Name string }) (names, ids []string, e *apiError) {
	for _, ref := range refs {
		g := s.secGroupByRef(ref.Name)
		if g == nil {
			return nil, nil, errf(400, "Security group %s not found for project %s.", ref.Name, ProjectID)
		}
		names, ids = append(names, g.Name), append(ids, g.ID)
	}
	if len(refs) == 0 {
		if g := s.secGroupByRef("default"); g != nil {
			names, ids = []string{g.Name}, []string{g.ID}
		}
	}
	return names, ids, nil
}

func (s *Sim) secGroupByRef(ref string) *SecurityGroup {
	if g, ok := s.st.secgroups[ref]; ok {
		return g
	}
	for _, g := range sortedBySeq(s.st.secgroups, func(g *SecurityGroup) uint64 { return g.seq }) {
		if g.Name == ref {
			return g
		}
	}
	return nil
}

func truthy(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		b, _ := strconv.ParseBool(t)
		return b
	}
	return false
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkFlavorFits is Nova's check of an image against the flavor it boots on: the image must be
// active, and the flavor's memory and (unless it is 0, volume-backed) disk large enough.
func checkFlavorFits(img *Image, f *Flavor) *apiError {
	const gib = 1 << 30
	switch {
	case img.Status != "active":
		return errf(400, "Image %s is not active.", img.ID)
	case img.MinRAM > f.RAM:
		return errf(400, "Flavor's memory is too small for requested image.")
	case f.Disk == 0:
		return nil
	case img.Size > int64(f.Disk)*gib:
		return errf(400, "Flavor's disk is too small for requested image. Flavor disk is %d bytes, image is %d bytes.", int64(f.Disk)*gib, img.Size)
	case img.MinDisk > f.Disk:
		return errf(400, "Flavor's disk is too small for requested image. Flavor disk is %d bytes, minimum size is %d bytes.", int64(f.Disk)*gib, int64(img.MinDisk)*gib)
	}
	return nil
}
