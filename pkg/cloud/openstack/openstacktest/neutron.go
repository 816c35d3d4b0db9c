package openstacktest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

const neutronBase = "/network/v2.0"

func (s *Sim) networkRoutes(mux *http.ServeMux) {
	handleRoot(mux, "/network", s.networkVersions)
	mux.HandleFunc("GET "+neutronBase+"/networks", s.neutronList("networks", s.renderNetworks))
	mux.HandleFunc("GET "+neutronBase+"/networks/{id}", s.neutronGet("network", s.renderNetworks))
	mux.HandleFunc("GET "+neutronBase+"/subnets", s.neutronList("subnets", s.renderSubnets))
	mux.HandleFunc("GET "+neutronBase+"/subnets/{id}", s.neutronGet("subnet", s.renderSubnets))
	mux.HandleFunc("GET "+neutronBase+"/security-groups", s.neutronList("security_groups", s.renderSecGroups))
	mux.HandleFunc("GET "+neutronBase+"/security-groups/{id}", s.neutronGet("security_group", s.renderSecGroups))
	mux.HandleFunc("GET "+neutronBase+"/ports", s.neutronList("ports", s.renderPorts))
	mux.HandleFunc("GET "+neutronBase+"/ports/{id}", s.neutronGet("port", s.renderPorts))
	mux.HandleFunc("POST "+neutronBase+"/ports", s.createPort)
	mux.HandleFunc("PUT "+neutronBase+"/ports/{id}", s.updatePort)
	mux.HandleFunc("DELETE "+neutronBase+"/ports/{id}", s.deletePort)
	mux.HandleFunc("GET "+neutronBase+"/floatingips", s.neutronList("floatingips", s.renderFloatingIPs))
	mux.HandleFunc("GET "+neutronBase+"/floatingips/{id}", s.neutronGet("floatingip", s.renderFloatingIPs))
	mux.HandleFunc("POST "+neutronBase+"/floatingips", s.createFloatingIP)
	mux.HandleFunc("PUT "+neutronBase+"/floatingips/{id}", s.updateFloatingIP)
	mux.HandleFunc("DELETE "+neutronBase+"/floatingips/{id}", s.deleteFloatingIP)
	mux.HandleFunc("/network/", notFound(serviceNetwork))
}

func (s *Sim) networkVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"versions": []any{map[string]any{
		"id": "v2.0", "status": "CURRENT",
		"links": []any{map[string]any{"rel": "self", "href": s.st.baseURL + neutronBase + "/"}}}}})
}

// A renderer returns every object of a kind in creation order, rendered as Neutron does.
// Callers hold s.mu.
type renderer func() []map[string]any

// neutronNotFound names Neutron's error type for a missing object of a kind.
func neutronNotFound(kind, id string) *apiError {
	name := map[string]string{"network": "Network", "subnet": "Subnet", "security_group": "SecurityGroup",
		"port": "Port", "floatingip": "FloatingIP"}[kind]
	msg := fmt.Sprintf("%s %s could not be found.", name, id)
	if kind == "security_group" {
		msg = fmt.Sprintf("Security group %s does not exist", id)
	}
	return neutronErr(404, name+"NotFound", "%s", msg)
}

func (s *Sim) neutronGet(kind string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, o := range render() {
			if o["id"] == id {
				writeJSON(w, http.StatusOK, map[string]any{kind: o})
				return
			}
		}
		writeError(w, serviceNetwork, neutronNotFound(kind, id))
	}
}

// neutronList lists objects that match every filter of the query. Repeating a key matches any
// of its values, as in Neutron; an unknown filter is a 400.
func (s *Sim) neutronList(collection string, render renderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []any{}
		for _, o := range render() {
			ok, e := neutronMatch(o, q)
			if e != nil {
				writeError(w, serviceNetwork, e)
				return
			}
			if ok {
				out = append(out, o)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{collection: out})
	}
}

func neutronMatch(o map[string]any, q url.Values) (bool, *apiError) {
	for key, want := range q {
		switch key {
		case "fields", "limit", "marker", "sort_key", "sort_dir", "page_reverse":
			continue
		case "tags", "tags-any", "not-tags", "not-tags-any":
			if !tagsMatch(key, strings.Split(want[0], ","), o["tags"].([]string)) {
				return false, nil
			}
			continue
		}
		v, ok := o[key]
		if !ok {
			return false, neutronErr(400, "HTTPBadRequest", "[%s] is invalid attribute for filtering", key)
		}
		got := fmt.Sprint(v)
		_, isBool := v.(bool)
		equal := func(w string) bool { return w == got || isBool && strings.EqualFold(w, got) }
		if !slices.ContainsFunc(want, equal) {
			return false, nil
		}
	}
	return true, nil
}

func tagsMatch(key string, want, have []string) bool {
	has := func(t string) bool { return slices.Contains(have, t) }
	switch key {
	case "tags":
		return all(want, has)
	case "tags-any":
		return slices.ContainsFunc(want, has)
	case "not-tags":
		return !all(want, has)
	default:
		return !slices.ContainsFunc(want, has)
	}
}

func (s *Sim) renderNetworks() []map[string]any {
	var out []map[string]any
	for _, n := range sortedBySeq(s.st.networks, func(n *Network) uint64 { return n.seq }) {
		out = append(out, map[string]any{
			"id": n.ID, "name": n.Name, "status": "ACTIVE", "admin_state_up": true, "shared": n.Shared,
			"subnets": slices.Clone(n.SubnetIDs), "router:external": n.External, "mtu": 1450,
			"tenant_id": ProjectID, "project_id": ProjectID, "description": "", "tags": []string{},
			"availability_zone_hints": []string{}, "revision_number": 1,
			"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"})
	}
	return out
}

func (s *Sim) renderSubnets() []map[string]any {
	var out []map[string]any
	for _, sn := range sortedBySeq(s.st.subnets, func(n *Subnet) uint64 { return n.seq }) {
		out = append(out, map[string]any{
			"id": sn.ID, "name": sn.Name, "network_id": sn.NetworkID, "cidr": sn.CIDR, "ip_version": 4,
			"gateway_ip": sn.GatewayIP, "enable_dhcp": true, "dns_nameservers": []string{},
			"allocation_pools": []any{}, "host_routes": []any{}, "tenant_id": ProjectID,
			"project_id": ProjectID, "description": "", "tags": []string{}, "revision_number": 1,
			"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"})
	}
	return out
}

func (s *Sim) renderSecGroups() []map[string]any {
	var out []map[string]any
	for _, g := range sortedBySeq(s.st.secgroups, func(g *SecurityGroup) uint64 { return g.seq }) {
		out = append(out, map[string]any{
			"id": g.ID, "name": g.Name, "description": g.Description, "stateful": true,
			"security_group_rules": []any{}, "tenant_id": ProjectID, "project_id": ProjectID,
			"tags": []string{}, "revision_number": 1,
			"created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"})
	}
	return out
}
