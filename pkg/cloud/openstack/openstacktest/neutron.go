package openstacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const neutronBase = "/network/v2.0"

// neutronMaxMTU is the MTU of the simulated tenant networks (VXLAN on a 1500-byte underlay).
const neutronMaxMTU = 1450

func (s *Sim) networkRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/network", s.networkVersions)
	handleRoot(mux, neutronBase, s.networkVersion)
	for _, c := range []struct {
		path, collection, kind string
		render                 renderer
	}{
		{"networks", "networks", "network", s.renderNetworks},
		{"subnets", "subnets", "subnet", s.renderSubnets},
		{"security-groups", "security_groups", "security_group", s.renderSecGroups},
		{"security-group-rules", "security_group_rules", "security_group_rule", s.renderSGRules},
		{"ports", "ports", "port", s.renderPorts},
		{"floatingips", "floatingips", "floatingip", s.renderFloatingIPs},
		{"routers", "routers", "router", s.renderRouters},
	} {
		mux.HandleFunc("GET "+neutronBase+"/"+c.path, s.neutronList(c.collection, c.kind, c.render))
		mux.HandleFunc("GET "+neutronBase+"/"+c.path+"/{id}", s.neutronGet(c.kind, c.render))
	}
	mux.HandleFunc("POST "+neutronBase+"/networks", s.createNetwork)
	mux.HandleFunc("PUT "+neutronBase+"/networks/{id}", s.updateNetwork)
	mux.HandleFunc("DELETE "+neutronBase+"/networks/{id}", s.deleteNetwork)
	mux.HandleFunc("POST "+neutronBase+"/ports", s.createPort)
	mux.HandleFunc("PUT "+neutronBase+"/ports/{id}", s.updatePort)
	mux.HandleFunc("DELETE "+neutronBase+"/ports/{id}", s.deletePort)
	mux.HandleFunc("POST "+neutronBase+"/floatingips", s.createFloatingIP)
	mux.HandleFunc("PUT "+neutronBase+"/floatingips/{id}", s.updateFloatingIP)
	mux.HandleFunc("DELETE "+neutronBase+"/floatingips/{id}", s.deleteFloatingIP)
	s.subnetRoutes(mux)
	s.secGroupRoutes(mux)
	s.routerRoutes(mux)
	s.neutronTagRoutes(mux)
	s.neutronMiscRoutes(mux)
	mux.HandleFunc("/network/", notFound(serviceNetwork))
}

func (s *Sim) networkV2Doc() map[string]any {
	return map[string]any{"id": "v2.0", "status": "CURRENT",
		"links": []any{map[string]any{"rel": "self", "href": s.st.baseURL + neutronBase + "/"}}}
}

func (s *Sim) networkVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []any{s.networkV2Doc()}})
}

// networkVersion is the v2.0 root, which lists its resources.
func (s *Sim) networkVersion(w http.ResponseWriter, r *http.Request) {
	var res []any
	for _, c := range []string{"subnets", "networks", "ports", "routers", "floatingips", "security_groups", "security_group_rules"} {
		res = append(res, map[string]any{"name": strings.TrimSuffix(c, "s"), "collection": c,
			"links": []any{map[string]any{"rel": "self", "href": s.st.baseURL + neutronBase + "/" + strings.ReplaceAll(c, "_", "-")}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"resources": res})
}

// neutronNotFound names Neutron's error type for a missing object of a kind.
func neutronNotFound(kind, id string) *apiError {
	name := map[string]string{"network": "Network", "subnet": "Subnet", "security_group": "SecurityGroup",
		"security_group_rule": "SecurityGroupRule", "port": "Port", "floatingip": "FloatingIP", "router": "Router"}[kind]
	msg := fmt.Sprintf("%s %s could not be found.", name, id)
	switch kind {
	case "security_group":
		msg = fmt.Sprintf("Security group %s does not exist", id)
	case "security_group_rule":
		msg = fmt.Sprintf("Security group rule %s does not exist", id)
	}
	return neutronErr(404, name+"NotFound", "%s", msg)
}

func overQuota(resource string) *apiError {
	return neutronErr(409, "OverQuota", "Quota exceeded for resources: ['%s'].", resource)
}

func (n *Network) attrs() attrs {
	return attrs{
		"name": {true, true, str(&n.Name)}, "description": {true, true, str(&n.Description)},
		"admin_state_up": {true, true, boolean(&n.AdminStateUp)}, "shared": {true, true, onlyFalse(&n.Shared)},
		"router:external": {true, true, onlyFalse(&n.External)}, "port_security_enabled": {true, true, boolean(&n.PortSecurity)},
		"mtu": {true, true, func(raw json.RawMessage) error {
			if err := json.Unmarshal(raw, &n.MTU); err != nil {
				return err
			}
			if n.MTU < 68 || n.MTU > neutronMaxMTU {
				return fmt.Errorf("requested MTU %d is out of range 68 to %d", n.MTU, neutronMaxMTU)
			}
			return nil
		}},
		"availability_zone_hints": {true, false, func(raw json.RawMessage) error {
			if err := strs(&n.AZHints)(raw); err != nil {
				return err
			}
			for _, z := range n.AZHints {
				if z != AvailabilityZone {
					return fmt.Errorf("availability zone %s could not be found", z)
				}
			}
			return nil
		}},
		"tags": {true, false, strs(&n.Tags)}, "tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

func (s *Sim) createNetwork(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "network")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	n := &Network{ID: newID(), AdminStateUp: true, MTU: neutronMaxMTU, PortSecurity: true, AZHints: []string{}, neutronStd: newStd("")}
	if e := n.attrs().apply("network", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.st.networks) >= s.quotaLimit(serviceNetwork, "network") {
		writeError(w, serviceNetwork, overQuota("network"))
		return
	}
	n.seq = s.st.next()
	s.st.networks[n.ID] = n
	writeJSON(w, http.StatusCreated, map[string]any{"network": s.renderNetwork(n)})
}

func (s *Sim) updateNetwork(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "network")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.st.networks[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("network", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, n.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	c := *n
	if e := c.attrs().apply("network", in, true); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	c.touch()
	*n = c
	writeJSON(w, http.StatusOK, map[string]any{"network": s.renderNetwork(n)})
}

// deleteNetwork deletes a network and its subnets unless a port other than a router's is on it.
func (s *Sim) deleteNetwork(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.st.networks[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("network", r.PathValue("id")))
		return
	}
	if e := checkIfMatch(r, n.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	for _, p := range s.st.ports {
		if p.NetworkID == n.ID {
			writeError(w, serviceNetwork, neutronErr(409, "NetworkInUse", "Unable to complete operation on network %s. There are one or more ports still in use on the network.", n.ID))
			return
		}
	}
	if s.networkUsedByRouterOrFIP(n.ID) {
		writeError(w, serviceNetwork, neutronErr(409, "NetworkInUse", "Unable to complete operation on network %s. There are one or more ports still in use on the network.", n.ID))
		return
	}
	for _, id := range n.SubnetIDs {
		delete(s.st.subnets, id)
	}
	delete(s.st.networks, n.ID)
	w.WriteHeader(http.StatusNoContent)
}

// networkUsedByRouterOrFIP: a router's gateway or a floating IP holds an address on it.
func (s *Sim) networkUsedByRouterOrFIP(id string) bool {
	for _, rt := range s.st.routers {
		if rt.GatewayNetworkID == id {
			return true
		}
	}
	for _, f := range s.st.fips {
		if f.NetworkID == id {
			return true
		}
	}
	return false
}

func (s *Sim) renderNetwork(n *Network) map[string]any {
	return n.render(map[string]any{
		"id": n.ID, "name": n.Name, "status": "ACTIVE", "admin_state_up": n.AdminStateUp, "shared": n.Shared,
		"subnets": append([]string{}, n.SubnetIDs...), "router:external": n.External, "mtu": n.MTU,
		"port_security_enabled": n.PortSecurity, "availability_zone_hints": append([]string{}, n.AZHints...),
		"availability_zones": []string{AvailabilityZone}, "ipv4_address_scope": nil, "ipv6_address_scope": nil,
		"l2_adjacency": true})
}

func (s *Sim) renderNetworks() []map[string]any {
	var out []map[string]any
	for _, n := range sortedBySeq(s.st.networks, func(n *Network) uint64 { return n.seq }) {
		out = append(out, s.renderNetwork(n))
	}
	return out
}
