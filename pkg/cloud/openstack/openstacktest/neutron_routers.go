package openstacktest

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

func (s *Sim) routerRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+neutronBase+"/routers", s.createRouter)
	mux.HandleFunc("PUT "+neutronBase+"/routers/{id}", s.updateRouter)
	mux.HandleFunc("DELETE "+neutronBase+"/routers/{id}", s.deleteRouter)
	mux.HandleFunc("PUT "+neutronBase+"/routers/{id}/add_router_interface", s.routerInterface(true))
	mux.HandleFunc("PUT "+neutronBase+"/routers/{id}/remove_router_interface", s.routerInterface(false))
}

// Device owners of the ports Neutron makes for routers.
const (
	ownerRouterInterface = "network:router_interface"
	ownerRouterGateway   = "network:router_gateway"
)

// gatewayInfo is a router's external_gateway_info as a member may send it: enable_snat and
// external_fixed_ips are admin-only in Neutron's default policy.
type gatewayInfo struct {
	NetworkID string          `json:"network_id"`
	SNAT      json.RawMessage `json:"enable_snat"`
	FixedIPs  json.RawMessage `json:"external_fixed_ips"`
}

// routerAttrs binds a router's attributes; the gateway request lands in gw (nil: none asked,
// pointer to nil: cleared).
func (rt *Router) attrs(gw **gatewayInfo) attrs {
	return attrs{
		"name": {true, true, str(&rt.Name)}, "description": {true, true, str(&rt.Description)},
		"admin_state_up": {true, true, boolean(&rt.AdminStateUp)}, "tags": {true, false, strs(&rt.Tags)},
		"availability_zone_hints": {true, false, strs(&rt.AZHints)},
		"external_gateway_info": {true, true, func(raw json.RawMessage) error {
			var info *gatewayInfo
			if err := json.Unmarshal(raw, &info); err != nil {
				return err
			}
			if info != nil && (info.SNAT != nil || info.FixedIPs != nil) {
				return errPolicy
			}
			if info != nil && info.NetworkID == "" {
				info = nil // {} clears the gateway, as null does
			}
			*gw = info
			return nil
		}},
		"tenant_id": {true, false, ownProject}, "project_id": {true, false, ownProject},
	}
}

// setGateway points a router's gateway at an external network (or clears it with nil),
// taking an address on its first subnet. Callers hold s.mu.
func (s *Sim) setGateway(rt *Router, info *gatewayInfo) *apiError {
	if info != nil && info.NetworkID == rt.GatewayNetworkID {
		return nil
	}
	if rt.GatewayNetworkID != "" {
		for _, f := range s.st.fips {
			if f.RouterID == rt.ID {
				return neutronErr(409, "RouterExternalGatewayInUseByFloatingIp", "Gateway cannot be updated for router %s, since a gateway to external network %s is required by one or more floating IPs.", rt.ID, rt.GatewayNetworkID)
			}
		}
	}
	if info != nil {
		n, ok := s.st.networks[info.NetworkID]
		if !ok {
			return neutronNotFound("network", info.NetworkID)
		}
		if !n.External || len(n.SubnetIDs) == 0 {
			return neutronErr(400, "BadRequest", "Bad router request: Network %s is not an external network.", n.ID)
		}
		sn := s.st.subnets[n.SubnetIDs[0]]
		ip, err := s.st.allocateIP(sn, "")
		if err != nil {
			return neutronErr(409, "IpAddressGenerationFailure", "No more IP addresses available on network %s.", n.ID)
		}
		s.releaseGateway(rt)
		rt.GatewayNetworkID, rt.GatewayIPs = n.ID, []FixedIP{{SubnetID: sn.ID, IPAddress: ip}}
		return nil
	}
	s.releaseGateway(rt)
	return nil
}

func (s *Sim) releaseGateway(rt *Router) {
	for _, f := range rt.GatewayIPs {
		s.st.releaseIP(f.SubnetID, f.IPAddress)
	}
	rt.GatewayNetworkID, rt.GatewayIPs = "", nil
}

func (s *Sim) createRouter(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "router")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	rt := &Router{ID: newID(), AdminStateUp: true, AZHints: []string{}, neutronStd: newStd("")}
	var gw *gatewayInfo
	if e := rt.attrs(&gw).apply("router", in, false); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.st.routers) >= s.quotaLimit(serviceNetwork, "router") {
		writeError(w, serviceNetwork, overQuota("router"))
		return
	}
	if e := s.setGateway(rt, gw); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	rt.seq = s.st.next()
	s.st.routers[rt.ID] = rt
	writeJSON(w, http.StatusCreated, map[string]any{"router": s.renderRouter(rt)})
}

// routerFor finds the router of the request's URL and checks If-Match, or answers. Callers
// hold s.mu.
func (s *Sim) routerFor(w http.ResponseWriter, r *http.Request) *Router {
	rt, ok := s.st.routers[r.PathValue("id")]
	if !ok {
		writeError(w, serviceNetwork, neutronNotFound("router", r.PathValue("id")))
		return nil
	}
	if e := checkIfMatch(r, rt.Revision); e != nil {
		writeError(w, serviceNetwork, e)
		return nil
	}
	return rt
}

func (s *Sim) updateRouter(w http.ResponseWriter, r *http.Request) {
	in, e := decodeNeutron(r, "router")
	if e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.routerFor(w, r)
	if rt == nil {
		return
	}
	c := *rt
	var gw *gatewayInfo
	if e := c.attrs(&gw).apply("router", in, true); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	if _, ok := in["external_gateway_info"]; ok {
		if e := s.setGateway(&c, gw); e != nil {
			writeError(w, serviceNetwork, e)
			return
		}
	}
	c.touch()
	*rt = c
	writeJSON(w, http.StatusOK, map[string]any{"router": s.renderRouter(rt)})
}

func (s *Sim) deleteRouter(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.routerFor(w, r)
	if rt == nil {
		return
	}
	if len(s.routerPorts(rt.ID)) > 0 {
		writeError(w, serviceNetwork, neutronErr(409, "RouterInUse", "Router %s still has ports", rt.ID))
		return
	}
	if e := s.setGateway(rt, nil); e != nil {
		writeError(w, serviceNetwork, e)
		return
	}
	delete(s.st.routers, rt.ID)
	w.WriteHeader(http.StatusNoContent)
}

// routerPorts lists a router's interface ports in creation order. Callers hold s.mu.
func (s *Sim) routerPorts(id string) []*Port {
	var out []*Port
	for _, p := range sortedBySeq(s.st.ports, func(p *Port) uint64 { return p.seq }) {
		if p.DeviceID == id && p.DeviceOwner == ownerRouterInterface {
			out = append(out, p)
		}
	}
	return out
}

func (s *Sim) renderRouter(rt *Router) map[string]any {
	var gw any
	if rt.GatewayNetworkID != "" {
		ips := []any{}
		for _, f := range rt.GatewayIPs {
			ips = append(ips, map[string]any{"subnet_id": f.SubnetID, "ip_address": f.IPAddress})
		}
		gw = map[string]any{"network_id": rt.GatewayNetworkID, "enable_snat": true, "external_fixed_ips": ips}
	}
	return rt.render(map[string]any{
		"id": rt.ID, "name": rt.Name, "status": "ACTIVE", "admin_state_up": rt.AdminStateUp,
		"external_gateway_info": gw, "availability_zone_hints": slices.Clone(rt.AZHints),
		"availability_zones": []string{AvailabilityZone}})
}

func (s *Sim) renderRouters() []map[string]any {
	var out []map[string]any
	for _, rt := range sortedBySeq(s.st.routers, func(r *Router) uint64 { return r.seq }) {
		out = append(out, s.renderRouter(rt))
	}
	return out
}

// addRouter seeds a router with a gateway on an external network and an interface on a
// subnet, both by name, as devstack's router1.
func (st *state) addRouter(name, external, subnet string) {
	rt := &Router{ID: newID(), Name: name, AdminStateUp: true, AZHints: []string{}, neutronStd: newStd(""), seq: st.next()}
	st.routers[rt.ID] = rt
	for _, n := range st.networks {
		if n.Name == external && len(n.SubnetIDs) > 0 {
			sn := st.subnets[n.SubnetIDs[0]]
			ip, _ := st.allocateIP(sn, "")
			rt.GatewayNetworkID, rt.GatewayIPs = n.ID, []FixedIP{{SubnetID: sn.ID, IPAddress: ip}}
		}
	}
	for _, sn := range st.subnets {
		if sn.Name == subnet {
			st.addInterfacePort(rt, sn)
		}
	}
}

// addInterfacePort makes the port of a router interface on a subnet, at its gateway address.
func (st *state) addInterfacePort(rt *Router, sn *Subnet) *Port {
	st.usedIPs[sn.ID+"/"+sn.GatewayIP] = true
	now := time.Now()
	seq := st.next()
	p := &Port{ID: newID(), NetworkID: sn.NetworkID, ProjectID: ProjectID, FixedIPs: []FixedIP{{sn.ID, sn.GatewayIP}},
		MACAddress: macOf(seq), DeviceID: rt.ID, DeviceOwner: ownerRouterInterface, AdminStateUp: true,
		Tags: []string{}, Created: now, Updated: now, Revision: 1, seq: seq}
	st.ports[p.ID] = p
	return p
}

// routeSubnet gives a subnet an interface on the seeded router1, if it is still there.
func (st *state) routeSubnet(subnetID string) {
	for _, rt := range st.routers {
		if rt.Name == "router1" {
			st.addInterfacePort(rt, st.subnets[subnetID])
			return
		}
	}
}
