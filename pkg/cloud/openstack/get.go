package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Get returns the Machine's server. A Machine whose record shows no create ever sent has no
// server, and costs no call: every create records its intent before it is sent.
func (p *Provider) Get(ctx context.Context, m *v1alpha1.Machine) (*cloud.Instance, error) {
	r, err := p.records.load(m)
	if err != nil {
		return nil, err
	}
	if r.ServerID == "" && !r.ServerPending {
		return p.notFound(m, r)
	}
	if inst, ok := p.running.get(m.UID); ok && inst.ID == r.ServerID {
		return inst, nil
	}
	mc, err := p.prepare(ctx, m)
	if err != nil {
		return nil, err
	}
	srv, err := p.findServer(ctx, mc, r)
	if err != nil {
		return nil, err
	}
	if srv == nil {
		p.running.forget(m.UID)
		p.owned.forget(m.UID)
		return p.notFound(m, r)
	}
	inst := p.instance(ctx, mc, srv)
	p.running.put(m.UID, inst)
	p.owned.put(m.UID, srv.ID)
	return inst, nil
}

// notFound reports a Machine without a server. While an ERROR server is being replaced, that is
// still an ERROR instance, so the controller calls Create again rather than giving up on it.
func (p *Provider) notFound(m *v1alpha1.Machine, r *record) (*cloud.Instance, error) {
	if r.Replacing {
		return &cloud.Instance{Name: m.Name, MachineUID: string(m.UID), State: cloud.StateError,
			Fault: r.LastFault}, nil
	}
	return nil, cloud.ErrInstanceNotFound
}

// instance converts srv, looking up the spec's flavor (cached) when the server's
// microversion does not embed it.
func (p *Provider) instance(ctx context.Context, mc *machine, srv *servers.Server) *cloud.Instance {
	var fl *flavorInfo
	if _, embedded := srv.Flavor["vcpus"]; !embedded {
		if f, err := p.flavor(ctx, mc.s, mc.spec.Flavor); err == nil {
			fl = &f
		}
	}
	return instance(srv, fl)
}

// List returns the servers of this cluster: those whose metadata holds the cluster's UID, found
// with the Nova tag filter (or, before microversion 2.26, by reading every server's metadata).
func (p *Provider) List(ctx context.Context, template *v1alpha1.Machine) ([]cloud.Instance, error) {
	mc, err := p.prepare(ctx, template)
	if err != nil {
		return nil, err
	}
	opts := servers.ListOpts{Limit: listPageSize}
	if mc.mv >= 26 {
		opts.Tags = p.owner.tag()
	}
	all, err := extract(ctx, servers.List(mc.compute, opts), servers.ExtractServers)
	if err != nil {
		return nil, classify(err, "listing the servers of cluster "+p.cluster)
	}
	var out []cloud.Instance
	for i := range all {
		if p.owner.cluster(all[i].Metadata) {
			out = append(out, *instance(&all[i], nil))
		}
	}
	return out, nil
}

// listPageSize is how many servers one page of the cluster's server list asks for: a page stays
// well within Options.MaxResponseBytes and MaxResponseValues however many servers the cluster
// has (Nova's own page size is up to 1,000).
const listPageSize = 200
