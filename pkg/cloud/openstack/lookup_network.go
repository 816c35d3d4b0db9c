package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

type networkInfo struct {
	ID, Name string
	External bool
}

type subnetInfo struct {
	ID, Name, NetworkID string
}

type groupInfo struct {
	ID, Name string
}

// byNameOrID resolves a Neutron object: a ref that looks like an ID is fetched directly, and
// anything else (or an ID that is not found) is listed with a name filter, never unfiltered.
func byNameOrID[T any](ctx context.Context, kind, ref string,
	get func(ctx context.Context, id string) (T, error),
	list func(ctx context.Context, name string) ([]T, error)) (T, error) {
	var zero T
	if looksLikeID(ref) {
		v, err := get(ctx, ref)
		if err == nil {
			return v, nil
		}
		if !isNotFound(err) {
			return zero, classify(err, "getting "+kind+" "+ref)
		}
	}
	matches, err := list(ctx, ref)
	if err != nil {
		return zero, classify(err, "listing "+kind+"s named "+ref)
	}
	return one(kind, ref, matches)
}

type networkExt struct {
	networks.Network
	external.NetworkExternalExt
}

func toNetworkInfo(n networkExt) networkInfo { return networkInfo{n.ID, n.Name, n.External} }

func listNetworks(ctx context.Context, s *session, opts networks.ListOptsBuilder) ([]networkInfo, error) {
	page, err := networks.List(s.network, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	var all []networkExt
	if err := networks.ExtractNetworksInto(page, &all); err != nil {
		return nil, err
	}
	out := make([]networkInfo, 0, len(all))
	for _, n := range all {
		out = append(out, toNetworkInfo(n))
	}
	return out, nil
}

func (p *Provider) network(ctx context.Context, s *session, ref string) (networkInfo, error) {
	return cached(p.cache, s.key+"|network|"+ref, func() (networkInfo, error) {
		return byNameOrID(ctx, "network", ref,
			func(ctx context.Context, id string) (networkInfo, error) {
				var n networkExt
				err := networks.Get(ctx, s.network, id).ExtractInto(&n)
				return toNetworkInfo(n), err
			},
			func(ctx context.Context, name string) ([]networkInfo, error) {
				return listNetworks(ctx, s, networks.ListOpts{Name: name})
			})
	})
}

// defaultNetwork is the project's only internal network, for specs that name none.
func (p *Provider) defaultNetwork(ctx context.Context, s *session) (networkInfo, error) {
	return cached(p.cache, s.key+"|network|<default>", func() (networkInfo, error) {
		internal := false
		all, err := listNetworks(ctx, s, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: &internal})
		if err != nil {
			return networkInfo{}, classify(err, "listing internal networks")
		}
		n, err := one("internal network", "", all)
		if err != nil {
			return networkInfo{}, notFound("a single internal network (set network)", "")
		}
		return n, nil
	})
}

func (p *Provider) subnet(ctx context.Context, s *session, ref, networkID string) (subnetInfo, error) {
	return cached(p.cache, s.key+"|subnet|"+networkID+"|"+ref, func() (subnetInfo, error) {
		return byNameOrID(ctx, "subnet", ref,
			func(ctx context.Context, id string) (subnetInfo, error) {
				sn, err := subnets.Get(ctx, s.network, id).Extract()
				if err != nil {
					return subnetInfo{}, err
				}
				return subnetInfo{sn.ID, sn.Name, sn.NetworkID}, nil
			},
			func(ctx context.Context, name string) ([]subnetInfo, error) {
				all, err := extract(ctx, subnets.List(s.network, subnets.ListOpts{Name: name, NetworkID: networkID}), subnets.ExtractSubnets)
				var out []subnetInfo
				for _, sn := range all {
					out = append(out, subnetInfo{sn.ID, sn.Name, sn.NetworkID})
				}
				return out, err
			})
	})
}

func (p *Provider) securityGroup(ctx context.Context, s *session, ref string) (groupInfo, error) {
	return cached(p.cache, s.key+"|secgroup|"+ref, func() (groupInfo, error) {
		return byNameOrID(ctx, "security group", ref,
			func(ctx context.Context, id string) (groupInfo, error) {
				g, err := groups.Get(ctx, s.network, id).Extract()
				if err != nil {
					return groupInfo{}, err
				}
				return groupInfo{g.ID, g.Name}, nil
			},
			func(ctx context.Context, name string) ([]groupInfo, error) {
				all, err := extract(ctx, groups.List(s.network, groups.ListOpts{Name: name}), groups.ExtractGroups)
				var out []groupInfo
				for _, g := range all {
					out = append(out, groupInfo{g.ID, g.Name})
				}
				return out, err
			})
	})
}

// extract reads every page of a listing.
func extract[T any](ctx context.Context, pager pagination.Pager, fn func(pagination.Page) ([]T, error)) ([]T, error) {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return fn(page)
}
