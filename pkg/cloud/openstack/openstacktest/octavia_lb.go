package openstacktest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

func (s *Sim) loadBalancerAPI() []octaviaRoute {
	return []octaviaRoute{
		{"GET", "/loadbalancers", s.octaviaList("loadbalancers", s.renderLoadBalancers)},
		{"POST", "/loadbalancers", s.createLoadBalancer},
		{"GET", "/loadbalancers/{id}", s.octaviaGet("loadbalancer", "Load Balancer", s.renderLoadBalancers)},
		{"PUT", "/loadbalancers/{id}", s.updateLoadBalancer},
		{"DELETE", "/loadbalancers/{id}", s.deleteLoadBalancer},
		{"GET", "/loadbalancers/{id}/status", s.loadBalancerStatus},
		{"GET", "/loadbalancers/{id}/statuses", s.loadBalancerStatus},
	}
}

type lbRequest struct {
	Name             *string           `json:"name"`
	Description      *string           `json:"description"`
	AdminStateUp     *bool             `json:"admin_state_up"`
	VIPAddress       string            `json:"vip_address"`
	VIPPortID        string            `json:"vip_port_id"`
	VIPSubnetID      string            `json:"vip_subnet_id"`
	VIPNetworkID     string            `json:"vip_network_id"`
	VIPQosPolicyID   *string           `json:"vip_qos_policy_id"`
	ProjectID        string            `json:"project_id"`
	Provider         string            `json:"provider"`
	FlavorID         string            `json:"flavor_id"`
	AvailabilityZone string            `json:"availability_zone"`
	Tags             *[]string         `json:"tags"`
	AdditionalVIPs   []json.RawMessage `json:"additional_vips"`
	Listeners        []json.RawMessage `json:"listeners"`
	Pools            []json.RawMessage `json:"pools"`
}

var lbCreateAttrs = []string{"name", "description", "admin_state_up", "vip_address", "vip_port_id",
	"vip_subnet_id", "vip_network_id", "vip_qos_policy_id", "project_id", "provider", "flavor_id",
	"availability_zone", "tags", "additional_vips", "listeners", "pools"}

func (s *Sim) createLoadBalancer(w http.ResponseWriter, r *http.Request) {
	var req lbRequest
	if e := decodeOctavia(r, "loadbalancer", lbCreateAttrs, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusCreated, "loadbalancer", func() (map[string]any, string, *apiError) {
		lb, e := s.newLoadBalancer(req)
		if e != nil {
			return nil, "", e
		}
		return s.renderLoadBalancer(lb), lb.ID, nil
	})
}

// newLoadBalancer validates a create request as Octavia does, makes the VIP port in Neutron
// unless the caller brought one, and records the load balancer PENDING_CREATE. Callers hold s.mu.
func (s *Sim) newLoadBalancer(req lbRequest) (*LoadBalancer, *apiError) {
	if req.ProjectID != "" && req.ProjectID != ProjectID {
		return nil, errf(403, "Policy does not allow this request to be performed.")
	}
	switch {
	case req.Provider != "" && req.Provider != octaviaProvider && req.Provider != "octavia":
		return nil, errf(400, "Provider '%s' is not enabled.", req.Provider)
	case req.FlavorID != "":
		return nil, errf(400, "Validation failure: Invalid flavor_id.")
	case req.AvailabilityZone != "":
		return nil, errf(400, "Validation failure: Invalid availability zone %s.", req.AvailabilityZone)
	case req.VIPQosPolicyID != nil && *req.VIPQosPolicyID != "":
		return nil, errf(400, "QoS Policy %s not found.", *req.VIPQosPolicyID)
	case len(req.AdditionalVIPs) > 0:
		return nil, unsupported("additional VIPs are not simulated")
	case len(req.Listeners) > 0 || len(req.Pools) > 0:
		return nil, unsupported("fully populated load balancers (listeners or pools in the create call) are not simulated")
	}
	vip, e := s.vipFor(req)
	if e != nil {
		return nil, e
	}
	now := time.Now()
	lb := &LoadBalancer{ID: newID(), Name: deref(req.Name), Description: deref(req.Description),
		ProjectID: ProjectID, ProvisioningStatus: lbPendingCreate, OperatingStatus: lbOffline,
		AdminStateUp: req.AdminStateUp == nil || *req.AdminStateUp, VIPSubnetID: vip.subnetID,
		VIPNetworkID: vip.networkID, Provider: req.Provider, Tags: tagsOf(req.Tags), Created: now,
		seq: s.st.next()}
	if lb.Provider == "" {
		lb.Provider = octaviaProvider
	}
	if vip.port == nil {
		p, e := s.newPort(portRequest{NetworkID: vip.networkID, Name: ptrTo("octavia-lb-" + lb.ID),
			DeviceOwner: ptrTo("Octavia"), DeviceID: ptrTo("lb-" + lb.ID),
			FixedIPs: []fixedIPRequest{{SubnetID: vip.subnetID, IPAddress: req.VIPAddress}}})
		if e != nil {
			return nil, e
		}
		vip.port, lb.VIPPortOwned = p, true
	}
	lb.VIPPortID = vip.port.ID
	for _, f := range vip.port.FixedIPs {
		if f.SubnetID == vip.subnetID {
			lb.VIPAddress = f.IPAddress
			break
		}
	}
	s.st.octavia.lbs[lb.ID] = lb
	return lb, nil
}

func (s *Sim) updateLoadBalancer(w http.ResponseWriter, r *http.Request) {
	var req lbRequest
	if e := decodeOctavia(r, "loadbalancer", []string{"name", "description", "admin_state_up", "vip_qos_policy_id", "tags"}, &req); e != nil {
		writeError(w, serviceLoadBalancer, e)
		return
	}
	s.octaviaChange(w, http.StatusOK, "loadbalancer", func() (map[string]any, string, *apiError) {
		lb, e := s.lbForChange(r.PathValue("id"))
		if e != nil {
			return nil, "", e
		}
		if req.VIPQosPolicyID != nil && *req.VIPQosPolicyID != "" {
			return nil, "", errf(400, "QoS Policy %s not found.", *req.VIPQosPolicyID)
		}
		setIf(&lb.Name, req.Name)
		setIf(&lb.Description, req.Description)
		setIf(&lb.AdminStateUp, req.AdminStateUp)
		if req.Tags != nil {
			lb.Tags = tagsOf(req.Tags)
		}
		lb.ProvisioningStatus, lb.Updated = lbPendingUpdate, time.Now()
		return s.renderLoadBalancer(lb), lb.ID, nil
	})
}

// lbForChange finds a load balancer that a change to itself may apply to: Octavia answers 409
// with the pending state when another change is running. Callers hold s.mu.
func (s *Sim) lbForChange(id string) (*LoadBalancer, *apiError) {
	lb, ok := s.st.octavia.lbs[id]
	if !ok {
		return nil, lbNotFound("Load Balancer", id)
	}
	if lb.ProvisioningStatus != lbActive {
		return nil, errf(409, "Invalid state %s of loadbalancer resource %s", lb.ProvisioningStatus, id)
	}
	return lb, nil
}

func (s *Sim) deleteLoadBalancer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	cascade, _ := strconv.ParseBool(r.URL.Query().Get("cascade"))
	s.octaviaChange(w, http.StatusNoContent, "", func() (map[string]any, string, *apiError) {
		lb, ok := s.st.octavia.lbs[id]
		if !ok {
			return nil, "", lbNotFound("Load Balancer", id)
		}
		if !cascade && s.hasChildren(id) {
			return nil, "", errf(400, "Validation failure: Cannot delete Load Balancer %s - it has children", id)
		}
		if _, e := s.lbForChange(id); e != nil {
			return nil, "", e
		}
		lb.ProvisioningStatus, lb.Updated = lbPendingDelete, time.Now()
		s.markTree(id, lbPendingDelete)
		return nil, id, nil
	})
}

// hasChildren tells whether a load balancer has listeners or pools. Callers hold s.mu.
func (s *Sim) hasChildren(lbID string) bool {
	o := s.st.octavia
	for _, l := range o.listeners {
		if l.LoadBalancerID == lbID {
			return true
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID == lbID {
			return true
		}
	}
	return false
}

// markTree sets the provisioning status of everything under a load balancer, for a cascade
// delete. Callers hold s.mu.
func (s *Sim) markTree(lbID, status string) {
	o := s.st.octavia
	for _, l := range o.listeners {
		if l.LoadBalancerID == lbID {
			l.ProvisioningStatus = status
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID != lbID {
			continue
		}
		p.ProvisioningStatus = status
		for _, m := range o.members {
			if m.PoolID == p.ID {
				m.ProvisioningStatus = status
			}
		}
		if hm := o.monitors[s.monitorOf(p.ID)]; hm != nil {
			hm.ProvisioningStatus = status
		}
	}
}

// removeLoadBalancer removes a load balancer with everything under it, and the VIP port when
// Octavia made it. Callers hold s.mu.
func (s *Sim) removeLoadBalancer(lb *LoadBalancer) {
	o := s.st.octavia
	for _, l := range o.listeners {
		if l.LoadBalancerID == lb.ID {
			delete(o.listeners, l.ID)
		}
	}
	for _, p := range o.pools {
		if p.LoadBalancerID == lb.ID {
			s.removePool(p)
		}
	}
	if p, ok := s.st.ports[lb.VIPPortID]; ok && lb.VIPPortOwned {
		s.deletePortLocked(p)
	}
	delete(o.lbs, lb.ID)
}

func ptrTo[T any](v T) *T { return &v }

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

func tagsOf(tags *[]string) []string {
	if tags == nil {
		return []string{}
	}
	return slices.Clone(*tags)
}
