package openstack

import (
	"context"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

type flavorInfo struct {
	ID, Name         string
	VCPUs, RAM, Disk int
}

type imageInfo struct {
	ID, Name string
	MinDisk  int
}

// looksLikeID: names that parse as UUIDs are tried as IDs first, so a lookup by ID is one GET.
func looksLikeID(ref string) bool {
	_, err := uuid.Parse(ref)
	return err == nil
}

func notFound(kind, ref string) error {
	return cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "%s %q not found", kind, ref)
}

func ambiguous(kind, ref string, n int) error {
	return cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "%d %ss are named %q; use the ID", n, kind, ref)
}

// one picks the single match of a name lookup.
func one[T any](kind, ref string, matches []T) (T, error) {
	var zero T
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return zero, notFound(kind, ref)
	}
	return zero, ambiguous(kind, ref, len(matches))
}

func (p *Provider) flavor(ctx context.Context, s *session, ref string) (flavorInfo, error) {
	return cached(p.cache, s.key+"|flavor|"+ref, func() (flavorInfo, error) {
		// Flavor IDs are free-form ("1", "m1.small"), so try the ref as an ID first; Nova's list
		// has no name filter, so a name costs one listing per cache period.
		f, err := flavors.Get(ctx, s.compute, ref).Extract()
		if err == nil {
			return flavorInfo{f.ID, f.Name, f.VCPUs, f.RAM, f.Disk}, nil
		}
		if !isNotFound(err) {
			return flavorInfo{}, classify(err, "getting flavor "+ref)
		}
		pages, err := flavors.ListDetail(s.compute, nil).AllPages(ctx)
		if err != nil {
			return flavorInfo{}, classify(err, "listing flavors")
		}
		all, err := flavors.ExtractFlavors(pages)
		if err != nil {
			return flavorInfo{}, classify(err, "reading flavors")
		}
		var matches []flavorInfo
		for _, f := range all {
			if f.Name == ref {
				matches = append(matches, flavorInfo{f.ID, f.Name, f.VCPUs, f.RAM, f.Disk})
			}
		}
		return one("flavor", ref, matches)
	})
}

func (p *Provider) image(ctx context.Context, s *session, ref string) (imageInfo, error) {
	return cached(p.cache, s.key+"|image|"+ref, func() (imageInfo, error) {
		if looksLikeID(ref) {
			im, err := images.Get(ctx, s.image, ref).Extract()
			if err == nil {
				return imageInfo{im.ID, im.Name, im.MinDiskGigabytes}, nil
			}
			if !isNotFound(err) {
				return imageInfo{}, classify(err, "getting image "+ref)
			}
		}
		pages, err := images.List(s.image, images.ListOpts{Name: ref}).AllPages(ctx)
		if err != nil {
			return imageInfo{}, classify(err, "listing images named "+ref)
		}
		all, err := images.ExtractImages(pages)
		if err != nil {
			return imageInfo{}, classify(err, "reading images")
		}
		var matches []imageInfo
		for _, im := range all {
			if im.Status == images.ImageStatusActive {
				matches = append(matches, imageInfo{im.ID, im.Name, im.MinDiskGigabytes})
			}
		}
		return one("image", ref, matches)
	})
}

func (p *Provider) serverGroup(ctx context.Context, s *session, ref string) (string, error) {
	return cached(p.cache, s.key+"|servergroup|"+ref, func() (string, error) {
		if looksLikeID(ref) {
			g, err := servergroups.Get(ctx, s.compute, ref).Extract()
			if err == nil {
				return g.ID, nil
			}
			if !isNotFound(err) {
				return "", classify(err, "getting server group "+ref)
			}
		}
		pages, err := servergroups.List(s.compute, nil).AllPages(ctx)
		if err != nil {
			return "", classify(err, "listing server groups")
		}
		all, err := servergroups.ExtractServerGroups(pages)
		if err != nil {
			return "", classify(err, "reading server groups")
		}
		var ids []string
		for _, g := range all {
			if g.Name == ref {
				ids = append(ids, g.ID)
			}
		}
		return one("server group", ref, ids)
	})
}

func (p *Provider) checkAvailabilityZone(ctx context.Context, s *session, zone string) error {
	_, err := cached(p.cache, s.key+"|az|"+zone, func() (bool, error) {
		pages, err := availabilityzones.List(s.compute).AllPages(ctx)
		if err != nil {
			return false, classify(err, "listing availability zones")
		}
		all, err := availabilityzones.ExtractAvailabilityZones(pages)
		if err != nil {
			return false, classify(err, "reading availability zones")
		}
		for _, z := range all {
			if z.ZoneName == zone && z.ZoneState.Available {
				return true, nil
			}
		}
		return false, notFound("availability zone", zone)
	})
	return err
}

func (p *Provider) checkVolumeType(ctx context.Context, s *session, ref string) error {
	_, err := cached(p.cache, s.key+"|volumetype|"+ref, func() (bool, error) {
		vc, err := s.volumeClient()
		if err != nil {
			return false, err
		}
		// Cinder shows a volume type by name or by ID.
		if _, err := volumetypes.Get(ctx, vc, ref).Extract(); err != nil {
			if isNotFound(err) {
				return false, notFound("volume type", ref)
			}
			return false, classify(err, "getting volume type "+ref)
		}
		return true, nil
	})
	return err
}
