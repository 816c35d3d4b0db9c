package openstack

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// findServer returns the Machine's live server, or nil: by the recorded ID, or by name and
// machine-uid when a create may have been sent without its ID being recorded, or when another
// machine-controller may have made the server. A server that another machine-controller made
// for the Machine is adopted on the way (see adopt).
func (p *Provider) findServer(ctx context.Context, mc *machine, r *record) (*servers.Server, error) {
	if r.ServerID != "" {
		srv, err := servers.Get(ctx, mc.compute, r.ServerID).Extract()
		switch {
		case isNotFound(err):
			return nil, nil
		case err != nil:
			return nil, classify(err, "getting server "+r.ServerID)
		case p.owner.foreign(srv, mc.m.UID):
			if err := p.adopt(ctx, mc, srv); err != nil {
				return nil, err
			}
		case !p.owner.server(srv, mc.m.UID):
			return nil, nil // not ours, whatever the record says
		}
		return srv, nil
	}
	if !r.ServerPending {
		return nil, nil
	}
	all, err := p.serversNamed(ctx, mc)
	if err != nil {
		return nil, err
	}
	for _, srv := range all {
		if srv.TaskState != "deleting" {
			return &srv, nil
		}
	}
	return nil, nil
}

// serversNamed lists the servers with the Machine's name that this cluster made for it, newest
// first, after adopting those that another machine-controller made for it.
func (p *Provider) serversNamed(ctx context.Context, mc *machine) ([]servers.Server, error) {
	opts := servers.ListOpts{Name: "^" + regexp.QuoteMeta(mc.m.Name) + "$"}
	all, err := extract(ctx, servers.List(mc.compute, opts), servers.ExtractServers)
	if err != nil {
		return nil, classify(err, "listing servers named "+mc.m.Name)
	}
	var out []servers.Server
	for _, srv := range all {
		if p.owner.foreign(&srv, mc.m.UID) && srv.TaskState != "deleting" {
			if err := p.adopt(ctx, mc, &srv); err != nil {
				return nil, err
			}
		}
		if p.owner.server(&srv, mc.m.UID) {
			out = append(out, srv)
		}
	}
	return out, nil
}

// state maps Nova's status to the provider-neutral state.
func state(srv *servers.Server) cloud.InstanceState {
	if srv.TaskState == "deleting" {
		return cloud.StateDeleting
	}
	switch srv.Status {
	case "BUILD", "REBUILD":
		return cloud.StateCreating
	case "ACTIVE", "REBOOT", "HARD_REBOOT", "PASSWORD", "MIGRATING", "RESIZE", "VERIFY_RESIZE", "REVERT_RESIZE":
		return cloud.StateRunning
	case "ERROR":
		return cloud.StateError
	case "DELETED", "SOFT_DELETED":
		return cloud.StateDeleting
	}
	return cloud.StateUnknown
}

// instance converts a Nova server. The hardware comes from the embedded flavor (microversion
// 2.47 and later) or from flavor, the spec's flavor, when the server uses it.
func instance(srv *servers.Server, flavor *flavorInfo) *cloud.Instance {
	inst := &cloud.Instance{
		ID: srv.ID, Name: srv.Name, ProviderID: "openstack:///" + srv.ID,
		MachineUID: srv.Metadata[MachineUIDKey], State: state(srv), Addresses: addresses(srv),
	}
	if inst.State == cloud.StateError {
		inst.Fault = srv.Fault.Message
		if inst.Fault == "" {
			inst.Fault = "the server is in ERROR without a fault message"
		}
	}
	if v, ok := number(srv.Flavor["vcpus"]); ok {
		inst.CPUs = v
		inst.MemoryMiB, _ = number(srv.Flavor["ram"])
	} else if flavor != nil && srv.Flavor["id"] == flavor.ID {
		inst.CPUs, inst.MemoryMiB = flavor.VCPUs, flavor.RAM
	}
	return inst
}

func number(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case json.Number:
		i, err := strconv.Atoi(n.String())
		return i, err == nil
	}
	return 0, false
}

// addresses lists fixed addresses as InternalIP and floating ones as ExternalIP, in network
// name order so the list is stable.
func addresses(srv *servers.Server) []corev1.NodeAddress {
	nets := make([]string, 0, len(srv.Addresses))
	for n := range srv.Addresses {
		nets = append(nets, n)
	}
	sort.Strings(nets)
	var internal, external []corev1.NodeAddress
	for _, n := range nets {
		list, _ := srv.Addresses[n].([]any)
		for _, a := range list {
			m, _ := a.(map[string]any)
			addr, _ := m["addr"].(string)
			if addr == "" {
				continue
			}
			if typ, _ := m["OS-EXT-IPS:type"].(string); typ == "floating" {
				external = append(external, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: addr})
			} else {
				internal = append(internal, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: addr})
			}
		}
	}
	return append(internal, external...)
}
