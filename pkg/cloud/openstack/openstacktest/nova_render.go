package openstacktest

import (
	"maps"
	"slices"
)

// vmState maps a server's status to Nova's vm_state, task_state and power_state.
func vmState(srv *Server) (vm string, task any, power int) {
	switch srv.Status {
	case "BUILD":
		vm, task = "building", "spawning"
	case "ACTIVE", "REBOOT", "HARD_REBOOT":
		vm, power = "active", 1
	case "SHUTOFF":
		vm, power = "stopped", 4
	default:
		vm = "error"
	}
	if srv.TaskState != "" {
		task = srv.TaskState
	}
	return vm, task, power
}

// renderServer renders a server in Nova's detailed form at microversion mv. Callers hold s.mu.
func (s *Sim) renderServer(srv *Server, mv microversion) map[string]any {
	vm, task, power := vmState(srv)
	m := map[string]any{
		"id": srv.ID, "name": srv.Name, "status": srv.Status, "tenant_id": srv.ProjectID, "user_id": UserID,
		"metadata": maps.Clone(srv.Metadata), "hostId": "", "created": ts(srv.Created), "updated": ts(srv.Updated),
		"addresses": s.serverAddresses(srv), "accessIPv4": "", "accessIPv6": "", "progress": 0,
		"links": s.link("/servers/" + srv.ID), "OS-DCF:diskConfig": "MANUAL", "key_name": nil,
		"OS-EXT-AZ:availability_zone": srv.AvailabilityZone, "config_drive": "",
		"OS-SRV-USG:launched_at": tsMicros(srv.LaunchedAt), "OS-SRV-USG:terminated_at": nil,
		"OS-EXT-STS:vm_state": vm, "OS-EXT-STS:task_state": task, "OS-EXT-STS:power_state": power,
	}
	if srv.KeyName != "" {
		m["key_name"] = srv.KeyName
	}
	m["accessIPv4"], m["accessIPv6"] = srv.AccessIPv4, srv.AccessIPv6
	if mv >= 19 {
		m["description"] = nullable(srv.Description)
	}
	if mv >= 90 {
		m["OS-EXT-SRV-ATTR:hostname"] = srv.Hostname
	}
	if srv.ConfigDrive {
		m["config_drive"] = "True"
	}
	if srv.ImageID != "" {
		m["image"] = map[string]any{"id": srv.ImageID, "links": s.link("/images/" + srv.ImageID)}
	} else {
		m["image"] = "" // booted from volume
	}
	if f := s.st.flavors[srv.FlavorID]; f != nil {
		if mv >= 47 {
			m["flavor"] = map[string]any{"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "ephemeral": 0,
				"swap": 0, "original_name": f.Name, "extra_specs": map[string]any{}}
		} else {
			m["flavor"] = map[string]any{"id": f.ID, "links": s.link("/flavors/" + f.ID)}
		}
	}
	sgs := []any{}
	for _, g := range srv.SecurityGroups {
		sgs = append(sgs, map[string]any{"name": g})
	}
	m["security_groups"] = sgs
	vols := []any{}
	for _, id := range srv.VolumeIDs {
		v := map[string]any{"id": id}
		if mv >= 3 {
			v["delete_on_termination"] = s.st.volumes[id] != nil && s.st.volumes[id].DeleteOnTermination
		}
		vols = append(vols, v)
	}
	m["os-extended-volumes:volumes_attached"] = vols
	if srv.Status == "ERROR" {
		m["fault"] = map[string]any{"code": 500, "created": ts(srv.Updated), "message": srv.Fault, "details": ""}
	}
	if mv >= 9 {
		m["locked"] = false
	}
	if mv >= 26 {
		m["tags"] = append([]string{}, srv.Tags...)
	}
	if mv >= 71 && srv.ServerGroupID != "" {
		m["server_groups"] = []string{srv.ServerGroupID}
	}
	return m
}

// serverAddresses lists fixed and floating addresses per network name, as Nova does.
func (s *Sim) serverAddresses(srv *Server) map[string]any {
	out := map[string]any{}
	for _, pid := range srv.PortIDs {
		p := s.st.ports[pid]
		if p == nil {
			continue
		}
		name := p.NetworkID
		if n := s.st.networks[p.NetworkID]; n != nil {
			name = n.Name
		}
		list, _ := out[name].([]any)
		for _, f := range p.FixedIPs {
			list = append(list, map[string]any{"version": 4, "addr": f.IPAddress,
				"OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": p.MACAddress})
		}
		for _, fip := range sortedBySeq(s.st.fips, func(f *FloatingIP) uint64 { return f.seq }) {
			if fip.PortID == p.ID {
				list = append(list, map[string]any{"version": 4, "addr": fip.Address,
					"OS-EXT-IPS:type": "floating", "OS-EXT-IPS-MAC:mac_addr": p.MACAddress})
			}
		}
		out[name] = list
	}
	return out
}

// copyServer returns a deep copy for callers outside the lock.
func (s *Sim) copyServer(srv *Server) Server {
	c := *srv
	c.Metadata = maps.Clone(srv.Metadata)
	c.Tags = slices.Clone(srv.Tags)
	c.UserData = slices.Clone(srv.UserData)
	c.SecurityGroups = slices.Clone(srv.SecurityGroups)
	c.PortIDs = slices.Clone(srv.PortIDs)
	c.VolumeIDs = slices.Clone(srv.VolumeIDs)
	return c
}
