package openstacktest

import "net/http"

// attachmentRoutes serve the read side of a server's attachments, as clients that inventory a
// server (terraform-provider-openstack, the cloud-controller-manager) read them. Attaching and
// detaching after boot are not simulated.
func (s *Sim) attachmentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-interface", s.listInterfaces)
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-interface/{port}", s.getInterface)
	mux.HandleFunc("GET "+novaBase+"/servers/{id}/os-volume_attachments", s.listVolumeAttachments)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	out := []any{}
	for _, id := range srv.PortIDs {
		if p := s.st.ports[id]; p != nil {
			out = append(out, s.renderInterface(p))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"interfaceAttachments": out})
}

func (s *Sim) getInterface(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	for _, id := range srv.PortIDs {
		if p := s.st.ports[id]; p != nil && id == r.PathValue("port") {
			writeJSON(w, http.StatusOK, map[string]any{"interfaceAttachment": s.renderInterface(p)})
			return
		}
	}
	writeError(w, serviceCompute, errf(404, "Network interface %s could not be found.", r.PathValue("port")))
}

func (s *Sim) listVolumeAttachments(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	out := []any{}
	for i, id := range srv.VolumeIDs {
		v := s.st.volumes[id]
		if v == nil {
			continue
		}
		a := map[string]any{"id": id, "volumeId": id, "serverId": srv.ID, "device": "/dev/vd" + string(rune('a'+i))}
		if mv := microversionOf(r); mv >= 70 {
			a["tag"] = nil
		}
		if mv := microversionOf(r); mv >= 79 {
			a["delete_on_termination"] = v.DeleteOnTermination
		}
		out = append(out, a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"volumeAttachments": out})
}
