package openstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Delete releases the server first, and only once it is gone the floating IPs, the port and the
// boot volume. It reports done when the cloud has confirmed every one gone; "not found" counts
// as gone, so it is safe to call again at any point.
func (p *Provider) Delete(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater) (bool, error) {
	p.running.forget(m.UID)
	r, err := p.records.load(m)
	if err != nil {
		return false, err
	}
	if r.empty() {
		p.records.forget(m.UID)
		return true, nil
	}
	mc, err := p.prepare(ctx, m)
	if err != nil {
		return false, err
	}
	if r.derived {
		r.PortPending = mc.spec.ownPort()
		r.FloatingIPPending = mc.spec.FloatingIPPool != ""
	}
	before := r.clone()
	gone, err := p.deleteServers(ctx, mc, r, update)
	if err == nil && gone {
		err = errors.Join(p.deleteFloatingIPs(ctx, mc, r), p.deletePort(ctx, mc, r), p.deleteVolumes(ctx, mc, r))
	}
	if err == nil && r.empty() {
		*r = record{} // released: drop the annotation with the create history
	}
	if !equalRecords(before, r) {
		if serr := p.records.save(ctx, m, update, r); serr != nil {
			if apierrors.IsNotFound(serr) && err == nil && r.empty() {
				// A late call for a Machine already released by an earlier one (the
				// controller's cache was behind): everything is gone, and so is the Machine.
				p.records.forget(m.UID)
				return true, nil
			}
			return false, errors.Join(err, serr)
		}
	}
	if err != nil || !r.empty() {
		return false, err
	}
	p.records.forget(m.UID)
	return true, nil
}

// deleteServers deletes every server of the Machine and reports whether all are gone. Boot
// volumes are recorded first, so they are checked after their server is gone.
func (p *Provider) deleteServers(ctx context.Context, mc *machine, r *record, update cloud.MachineUpdater) (bool, error) {
	var found []servers.Server
	if r.ServerPending {
		all, err := p.serversNamed(ctx, mc)
		if err != nil {
			return false, err
		}
		found = all
	} else if r.ServerID != "" && mc.spec.RootDiskSizeGB == nil && !r.derived {
		// The recorded ID came from our own create, and there are no boot volumes to learn
		// about: delete without looking first.
		found = append(found, servers.Server{ID: r.ServerID})
	} else if r.ServerID != "" {
		srv, err := servers.Get(ctx, mc.compute, r.ServerID).Extract()
		if err != nil && !isNotFound(err) {
			return false, classify(err, "getting server "+r.ServerID)
		}
		if err == nil && srv.Metadata[MachineUIDKey] == string(mc.m.UID) {
			found = append(found, *srv)
		}
	}
	if len(found) == 0 {
		r.ServerID, r.ServerPending, r.Replacing = "", false, false
		return true, nil
	}
	vols := len(r.VolumeIDs)
	for i := range found {
		r.VolumeIDs = appendNew(r.VolumeIDs, bootVolumes(mc, &found[i])...)
	}
	if len(r.VolumeIDs) != vols {
		if err := p.records.save(ctx, mc.m, update, r); err != nil {
			return false, err
		}
	}
	remaining := 0
	for _, srv := range found {
		if srv.TaskState != "deleting" {
			if err := servers.Delete(ctx, mc.compute, srv.ID).ExtractErr(); err != nil && !isNotFound(err) {
				return false, classify(err, "deleting server "+srv.ID)
			}
		}
		// Nova deletes asynchronously: only a 404 proves the server gone.
		_, err := servers.Get(ctx, mc.compute, srv.ID).Extract()
		switch {
		case isNotFound(err):
		case err != nil:
			return false, classify(err, "checking that server "+srv.ID+" is gone")
		default:
			remaining++
		}
	}
	if remaining > 0 {
		return false, nil
	}
	r.ServerID, r.ServerPending, r.Replacing = "", false, false
	return true, nil
}

func (p *Provider) deleteFloatingIPs(ctx context.Context, mc *machine, r *record) error {
	if r.FloatingIPPending {
		found, err := floatingIPsOf(ctx, mc)
		if err != nil {
			return err
		}
		for _, f := range found {
			r.FloatingIPs = appendNew(r.FloatingIPs, f.ID)
		}
		r.FloatingIPPending = false
	}
	var errs []error
	kept := r.FloatingIPs[:0]
	for _, id := range r.FloatingIPs {
		if err := floatingips.Delete(ctx, mc.s.network, id).ExtractErr(); err != nil && !isNotFound(err) {
			errs = append(errs, classify(err, "releasing floating IP "+id))
			kept = append(kept, id)
		}
	}
	r.FloatingIPs = kept
	return errors.Join(errs...)
}

func (p *Provider) deletePort(ctx context.Context, mc *machine, r *record) error {
	if r.PortPending {
		found, err := portsOf(ctx, mc)
		if err != nil {
			return err
		}
		var errs []error
		for _, port := range found {
			if err := ports.Delete(ctx, mc.s.network, port.ID).ExtractErr(); err != nil && !isNotFound(err) {
				errs = append(errs, classify(err, "deleting port "+port.ID))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		r.PortPending = false
	}
	if r.PortID == "" {
		return nil
	}
	if err := ports.Delete(ctx, mc.s.network, r.PortID).ExtractErr(); err != nil && !isNotFound(err) {
		return classify(err, "deleting port "+r.PortID)
	}
	r.PortID = ""
	return nil
}

// deleteVolumes checks the boot volumes once their server is gone. Nova deletes them with the
// server; one that survived (Nova's volume call failed) is deleted here.
func (p *Provider) deleteVolumes(ctx context.Context, mc *machine, r *record) error {
	if len(r.VolumeIDs) == 0 {
		return nil
	}
	vc, err := mc.s.volumeClient()
	if err != nil {
		return err
	}
	var errs []error
	kept := r.VolumeIDs[:0]
	for _, id := range r.VolumeIDs {
		v, err := volumes.Get(ctx, vc, id).Extract()
		switch {
		case isNotFound(err):
			continue
		case err != nil:
			errs = append(errs, classify(err, "getting volume "+id))
		case v.Status == "available" || v.Status == "error":
			if err := volumes.Delete(ctx, vc, id, nil).ExtractErr(); err != nil && !isNotFound(err) {
				errs = append(errs, classify(err, "deleting volume "+id))
			} else if _, err := volumes.Get(ctx, vc, id).Extract(); isNotFound(err) {
				continue
			}
		default:
			errs = append(errs, fmt.Errorf("volume %s is %s; waiting before deleting it", id, v.Status))
		}
		kept = append(kept, id)
	}
	r.VolumeIDs = kept
	return errors.Join(errs...)
}

func equalRecords(a, b *record) bool {
	ja, _ := jsonOf(a)
	jb, _ := jsonOf(b)
	return ja == jb
}
