package openstacktest

import (
	"encoding/json"
	"maps"
	"net"
	"net/netip"
	"strconv"
)

// configDriveVersions are the metadata versions a config drive carries besides "latest". Nova
// writes every version it knows; cloud-init's ds-identify looks for a dated one, and reads
// "latest".
var configDriveVersions = []string{"2012-08-10", "2018-08-27", "latest"}

// configDrive renders a server's config drive the way Nova's configdrive builder lays it out
// (openstack/<version>/meta_data.json, user_data, network_data.json, vendor_data.json), which is
// what cloud-init's ConfigDrive datasource reads. Callers hold s.mu.
func (s *Sim) configDrive(srv *Server, m Machine) map[string][]byte {
	meta := map[string]any{
		"uuid": srv.ID, "name": srv.Name, "hostname": m.Hostname, "launch_index": 0,
		"availability_zone": srv.AvailabilityZone, "project_id": srv.ProjectID,
		"meta": maps.Clone(srv.Metadata), "devices": []any{}, "files": []any{},
	}
	if meta["meta"] == nil {
		meta["meta"] = map[string]string{}
	}
	if m.PublicKey != "" {
		meta["public_keys"] = map[string]string{srv.KeyName: m.PublicKey}
		meta["keys"] = []any{map[string]any{"name": srv.KeyName, "type": "ssh", "data": m.PublicKey}}
	}
	files := map[string][]byte{}
	for _, v := range configDriveVersions {
		dir := "openstack/" + v + "/"
		files[dir+"meta_data.json"] = mustJSON(meta)
		files[dir+"network_data.json"] = mustJSON(networkData(m))
		files[dir+"vendor_data.json"] = []byte("{}")
		if srv.UserData != nil {
			files[dir+"user_data"] = srv.UserData
		}
	}
	return files
}

// networkData is the network_data.json of a machine: one link per port, its static address,
// and a default route through the gateway of the first network that has one.
func networkData(m Machine) map[string]any {
	links, networks := []any{}, []any{}
	routed := false
	for i, p := range m.Ports {
		link := "tap" + p.PortID[:min(11, len(p.PortID))]
		links = append(links, map[string]any{"id": link, "type": "ovs", "ethernet_mac_address": p.MAC,
			"mtu": 1500, "vif_id": p.PortID})
		n := map[string]any{"id": "network" + strconv.Itoa(i), "type": "ipv4", "link": link,
			"ip_address": p.IP, "netmask": netmask(p.Network.CIDR), "network_id": p.Network.ID, "routes": []any{}}
		if p.Network.Gateway != "" && !routed {
			n["routes"] = []any{map[string]any{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": p.Network.Gateway}}
			routed = true
		}
		networks = append(networks, n)
	}
	return map[string]any{"links": links, "networks": networks, "services": []any{}}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings, numbers and slices reach here
	}
	return b
}

// netmask is the dotted mask of a CIDR, or "" for a malformed one.
func netmask(cidr string) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return ""
	}
	return net.IP(net.CIDRMask(p.Bits(), 32)).String()
}
