package openstacktest

import (
	"net/http"
	"slices"
	"time"
)

// attachmentRoutes serve a server's interface and volume attachments. Volumes attach and
// detach after boot; interfaces are only read (hot-plugging ports is not simulated).
func (s *Sim) attachmentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-interface", s.listInterfaces)
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-interface/{port}", s.getInterface)
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-volume_attachments", s.listVolumeAttachments)
	mux.HandleFunc("POST "+novaBase+"/servers/{id}/os-volume_attachments", s.attachVolume)
	mux.HandleFunc("DELETE "+novaBase+"/servers/{id}/os-volume_attachments/{volume}", s.detachVolume)
}

func (s *Sim) renderInterface(p *Port) map[string]any {
	fixed := []any{}
	for _, f := range p.FixedIPs {
		fixed = append(fixed, map[string]any{"subnet_id": f.SubnetID, "ip_address": f.IPAddress})
	}
	return map[string]any{"port_id": p.ID, "net_id": p.NetworkID, "mac_addr": p.MACAddress,
		"port_state": s.renderPort(p)["status"], "fixed_ips": fixed}
}

func (s *Sim) listInterfaces(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		out := []any{}
		for _, id := range srv.PortIDs {
			if p := s.st.ports[id]; p != nil {
				out = append(out, s.renderInterface(p))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"interfaceAttachments": out})
	})
}

func (s *Sim) getInterface(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		for _, id := range srv.PortIDs {
			if p := s.st.ports[id]; p != nil && id == r.PathValue("port") {
				writeJSON(w, http.StatusOK, map[string]any{"interfaceAttachment": s.renderInterface(p)})
				return
			}
		}
		writeError(w, serviceCompute, errf(404, "Network interface %s could not be found.", r.PathValue("port")))
	})
}

func (s *Sim) renderVolumeAttachment(srv *Server, i int, mv microversion) map[string]any {
	id := srv.VolumeIDs[i]
	a := map[string]any{"id": id, "volumeId": id, "serverId": srv.ID, "device": nil}
	if v := s.st.volumes[id]; v != nil {
		a["device"] = v.Device
	}
	if mv >= 70 {
		a["tag"] = nil
	}
	if v := s.st.volumes[id]; mv >= 79 && v != nil {
		a["delete_on_termination"] = v.DeleteOnTermination
	}
	return a
}

func (s *Sim) listVolumeAttachments(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		out := []any{}
		for i, id := range srv.VolumeIDs {
			if s.st.volumes[id] != nil {
				out = append(out, s.renderVolumeAttachment(srv, i, microversionOf(r)))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"volumeAttachments": out})
	})
}

// attachVolume attaches an available volume as the server's next disk.
func (s *Sim) attachVolume(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Attachment *struct {
			VolumeID            string  `json:"volumeId"`
			Device              *string `json:"device"`
			Tag                 *string `json:"tag"`
			DeleteOnTermination bool    `json:"delete_on_termination"`
		} `json:"volumeAttachment"`
	}
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	mv := microversionOf(r)
	switch a := body.Attachment; {
	case a == nil || a.VolumeID == "":
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute volumeAttachment. 'volumeId' is a required property"))
		return
	case a.Device != nil && *a.Device != "":
		writeError(w, serviceCompute, errf(400, "the simulator names devices itself; leave device unset"))
		return
	case a.Tag != nil || a.DeleteOnTermination && mv < 79:
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute volumeAttachment: tag and delete_on_termination are not accepted here"))
		return
	}
	s.onServer(w, r, func(srv *Server) {
		v := s.st.volumes[body.Attachment.VolumeID]
		if v == nil {
			writeError(w, serviceCompute, errf(404, "Volume %s could not be found.", body.Attachment.VolumeID))
			return
		}
		if v.Status != "available" {
			writeError(w, serviceCompute, errf(400, "Invalid volume: volume %s status must be available, but current status is: %s", v.ID, v.Status))
			return
		}
		v.Status, v.ServerID, v.DeleteOnTermination, v.Updated = "in-use", srv.ID, body.Attachment.DeleteOnTermination, time.Now()
		v.Device = s.nextDevice(srv)
		srv.VolumeIDs = append(srv.VolumeIDs, v.ID)
		writeJSON(w, http.StatusOK, map[string]any{"volumeAttachment": s.renderVolumeAttachment(srv, len(srv.VolumeIDs)-1, mv)})
	})
}

// detachVolume detaches a volume other than the boot volume.
func (s *Sim) detachVolume(w http.ResponseWriter, r *http.Request) {
	s.onServer(w, r, func(srv *Server) {
		id := r.PathValue("volume")
		i := slices.Index(srv.VolumeIDs, id)
		if i < 0 {
			writeError(w, serviceCompute, errf(404, "volume_id not found: %s", id))
			return
		}
		if v := s.st.volumes[id]; v != nil && v.Bootable && i == 0 && srv.ImageID == "" {
			writeError(w, serviceCompute, errf(400, "Cannot detach a root device volume"))
			return
		}
		srv.VolumeIDs = slices.Delete(srv.VolumeIDs, i, i+1)
		if v := s.st.volumes[id]; v != nil {
			v.Status, v.ServerID, v.Device, v.DeleteOnTermination, v.Updated = "available", "", "", false, time.Now()
		}
		w.WriteHeader(http.StatusAccepted)
	})
}

// nextDevice is the first free /dev/vdX of a server; an image-booted server's root is vda.
// Callers hold s.mu.
func (s *Sim) nextDevice(srv *Server) string {
	used := map[string]bool{}
	if srv.ImageID != "" {
		used["/dev/vda"] = true
	}
	for _, id := range srv.VolumeIDs {
		if v := s.st.volumes[id]; v != nil {
			used[v.Device] = true
		}
	}
	for c := 'a'; ; c++ {
		if d := "/dev/vd" + string(c); !used[d] {
			return d
		}
	}
}
