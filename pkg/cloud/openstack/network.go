package openstack

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// ensureNetworking makes the port and the floating IP the spec asks for, before the server, so
// that the server boots with its addresses. A port or floating IP recorded by an earlier call is
// reused, and one that may have been made without being recorded is found by its description.
func (p *Provider) ensureNetworking(ctx context.Context, mc *machine, t *target, r *record, update cloud.MachineUpdater) error {
	if !mc.spec.ownPort() {
		return nil
	}
	if err := p.adoptNetworking(ctx, mc, r); err != nil {
		return err
	}
	needPort := r.PortID == ""
	needFIP := t.floatingNetwork != nil && len(r.FloatingIPs) == 0
	if !needPort && !needFIP {
		return nil
	}
	r.PortPending, r.FloatingIPPending = needPort, needFIP
	if err := p.records.save(ctx, mc.m, update, r); err != nil {
		return err
	}
	var allocErr error
	if needPort {
		allocErr = p.createPort(ctx, mc, t, r)
	}
	if allocErr == nil && needFIP {
		allocErr = p.createFloatingIP(ctx, mc, t, r)
	}
	// Record what was made even when a step failed, so nothing is forgotten.
	if err := p.records.save(ctx, mc.m, update, r); err != nil {
		return err
	}
	return allocErr
}

// adoptNetworking resolves pending allocations of an interrupted call by searching for them,
// and drops recorded ones that the cloud does not show as the Machine's: a server must never be
// given another's port or floating IP because an annotation names it.
func (p *Provider) adoptNetworking(ctx context.Context, mc *machine, r *record) error {
	if r.PortID != "" {
		port, err := ports.Get(ctx, mc.s.network, r.PortID).Extract()
		switch {
		case isNotFound(err) || err == nil && port.Description != p.owner.marker(mc.m):
			r.PortID = ""
		case err != nil:
			return classify(err, "getting port "+r.PortID)
		}
	}
	kept := r.FloatingIPs[:0]
	for _, id := range r.FloatingIPs {
		fip, err := floatingips.Get(ctx, mc.s.network, id).Extract()
		switch {
		case isNotFound(err) || err == nil && fip.Description != p.owner.marker(mc.m):
		case err != nil:
			return classify(err, "getting floating IP "+id)
		default:
			kept = append(kept, id)
		}
	}
	r.FloatingIPs = kept
	if r.PortPending && r.PortID == "" {
		found, err := p.portsOf(ctx, mc)
		if err != nil {
			return err
		}
		if len(found) > 0 {
			r.PortID = found[0].ID
		}
		r.PortPending = false
	}
	if r.FloatingIPPending && len(r.FloatingIPs) == 0 {
		found, err := p.floatingIPsOf(ctx, mc)
		if err != nil {
			return err
		}
		for _, f := range found {
			r.FloatingIPs = append(r.FloatingIPs, f.ID)
		}
		r.FloatingIPPending = false
	}
	return nil
}

func (p *Provider) createPort(ctx context.Context, mc *machine, t *target, r *record) error {
	opts := ports.CreateOpts{NetworkID: t.network.ID, Name: mc.m.Name, Description: p.owner.marker(mc.m)}
	if t.subnet != nil {
		opts.FixedIPs = []ports.IP{{SubnetID: t.subnet.ID}}
	}
	if len(t.groups) > 0 {
		ids := make([]string, 0, len(t.groups))
		for _, g := range t.groups {
			ids = append(ids, g.ID)
		}
		opts.SecurityGroups = &ids
	}
	port, err := ports.Create(ctx, mc.s.network, opts).Extract()
	if err != nil {
		r.PortPending = !rejected(err)
		return classify(err, fmt.Sprintf("creating the port of machine %s on network %s", mc.m.Name, t.network.Name))
	}
	r.PortID, r.PortPending = port.ID, false
	return nil
}

func (p *Provider) createFloatingIP(ctx context.Context, mc *machine, t *target, r *record) error {
	fip, err := floatingips.Create(ctx, mc.s.network, floatingips.CreateOpts{
		FloatingNetworkID: t.floatingNetwork.ID, PortID: r.PortID, Description: p.owner.marker(mc.m)}).Extract()
	if err != nil {
		r.FloatingIPPending = !rejected(err)
		return classify(err, fmt.Sprintf("allocating a floating IP from %s for machine %s", t.floatingNetwork.Name, mc.m.Name))
	}
	r.FloatingIPs, r.FloatingIPPending = append(r.FloatingIPs, fip.ID), false
	return nil
}

// portsOf finds the ports made for the Machine, by name and description.
func (p *Provider) portsOf(ctx context.Context, mc *machine) ([]ports.Port, error) {
	opts := ports.ListOpts{Name: mc.m.Name, Description: p.owner.marker(mc.m)}
	found, err := extract(ctx, ports.List(mc.s.network, opts), ports.ExtractPorts)
	if err != nil {
		return nil, classify(err, "looking for the port of machine "+mc.m.Name)
	}
	// Filter again: a cloud that ignored the filter must not get every port deleted.
	return slices.DeleteFunc(found, func(port ports.Port) bool {
		return port.Name != opts.Name || port.Description != opts.Description
	}), nil
}

// floatingIPsOf finds the floating IPs allocated for the Machine, by description.
func (p *Provider) floatingIPsOf(ctx context.Context, mc *machine) ([]floatingips.FloatingIP, error) {
	opts := floatingips.ListOpts{Description: p.owner.marker(mc.m)}
	found, err := extract(ctx, floatingips.List(mc.s.network, opts), floatingips.ExtractFloatingIPs)
	if err != nil {
		return nil, classify(err, "looking for the floating IPs of machine "+mc.m.Name)
	}
	return slices.DeleteFunc(found, func(f floatingips.FloatingIP) bool { return f.Description != opts.Description }), nil
}
