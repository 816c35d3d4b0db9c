package openstack

import (
	"context"
	"errors"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// target is a spec with every name resolved to the cloud's objects.
type target struct {
	flavor          flavorInfo
	image           imageInfo
	network         networkInfo
	subnet          *subnetInfo
	groups          []groupInfo
	floatingNetwork *networkInfo
	serverGroupID   string
}

// resolve looks up everything the spec names and checks that it fits together. Every lookup is
// cached, so the machines of one template cost the cloud one round of lookups per cache period.
// A missing or mismatched object is a TerminalError (InvalidConfiguration); all problems are
// reported together.
func (p *Provider) resolve(ctx context.Context, s *session, spec *Spec) (*target, error) {
	t := &target{}
	var errs []error
	keep := func(err error) bool {
		if err != nil {
			errs = append(errs, err)
		}
		return err == nil
	}
	var err error
	t.flavor, err = p.flavor(ctx, s, spec.Flavor)
	flavorOK := keep(err)
	t.image, err = p.image(ctx, s, spec.Image)
	imageOK := keep(err)
	switch {
	case spec.Network != "":
		t.network, err = p.network(ctx, s, spec.Network)
	case spec.Subnet != "":
		var sn subnetInfo
		if sn, err = p.subnet(ctx, s, spec.Subnet, ""); err == nil {
			t.network, err = p.network(ctx, s, sn.NetworkID)
		}
	default:
		t.network, err = p.defaultNetwork(ctx, s)
	}
	if keep(err) && spec.Subnet != "" {
		sn, err := p.subnet(ctx, s, spec.Subnet, t.network.ID)
		if keep(err) {
			t.subnet = &sn
		}
	}
	for _, ref := range spec.SecurityGroups {
		g, err := p.securityGroup(ctx, s, ref)
		if keep(err) {
			t.groups = append(t.groups, g)
		}
	}
	if spec.FloatingIPPool != "" {
		n, err := p.network(ctx, s, spec.FloatingIPPool)
		if keep(err) {
			if !n.External {
				keep(invalid("floatingIpPool %q is not an external network", spec.FloatingIPPool))
			}
			t.floatingNetwork = &n
		}
	}
	if spec.ServerGroupID != "" {
		t.serverGroupID, err = p.serverGroup(ctx, s, spec.ServerGroupID)
		keep(err)
	}
	if spec.AvailabilityZone != "" {
		keep(p.checkAvailabilityZone(ctx, s, spec.AvailabilityZone))
	}
	if spec.RootDiskVolumeType != "" {
		keep(p.checkVolumeType(ctx, s, spec.RootDiskVolumeType))
	}
	switch {
	case !imageOK:
	case spec.RootDiskSizeGB != nil && *spec.RootDiskSizeGB < t.image.MinDisk:
		keep(invalid("rootDiskSizeGB %d is smaller than image %s's min_disk of %d GB",
			*spec.RootDiskSizeGB, t.image.Name, t.image.MinDisk))
	case spec.RootDiskSizeGB == nil && flavorOK && t.flavor.Disk > 0 && t.flavor.Disk < t.image.MinDisk:
		keep(invalid("flavor %s's %d GB disk is smaller than image %s's min_disk of %d GB; set rootDiskSizeGB",
			t.flavor.Name, t.flavor.Disk, t.image.Name, t.image.MinDisk))
	}
	if len(errs) > 0 {
		return nil, joinTerminal(errs)
	}
	return t, nil
}

func invalid(format string, args ...any) error {
	return cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, format, args...)
}

// joinTerminal combines errors. When all are terminal the result is one TerminalError with the
// first reason, so the controller still recognises it; otherwise the transient ones win, since
// retrying may be all that is needed.
func joinTerminal(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	var transient []error
	var first *cloud.TerminalError
	msg := ""
	for _, err := range errs {
		t, ok := cloud.AsTerminal(err)
		if !ok {
			transient = append(transient, err)
			continue
		}
		if first == nil {
			first = t
		} else {
			msg += "; "
		}
		msg += t.Message
	}
	if len(transient) > 0 {
		return errors.Join(transient...)
	}
	return &cloud.TerminalError{Reason: first.Reason, Message: msg}
}
