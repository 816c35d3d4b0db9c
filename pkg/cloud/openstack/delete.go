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
	"k8s.io/apimachinery/pkg/types"

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
		p.forget(m.UID)
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
				p.forget(m.UID)
				return true, nil
			}
			return false, errors.Join(err, serr)
		}
	}
	if err != nil || !r.empty() {
		return false, err
	}
	p.forget(m.UID)
	return true, nil
}

// forget drops what this process remembers of a Machine whose resources are all released.
func (p *Provider) forget(uid types.UID) {
	p.records.forget(uid)
	p.volumes.forget(uid)
	p.owned.forget(uid)
}

// deleteServers deletes every server of the Machine and reports whether all are gone. Only
// servers whose metadata, as the cloud reports it, names this cluster and this Machine are
// deleted: a recorded ID that names another server is dropped, and the Machine's own server,
// if any, is then looked for by name. Boot volumes are recorded first, so they are checked
// after their server is gone.
func (p *Provider) deleteServers(ctx context.Context, mc *machine, r *record, update cloud.MachineUpdater) (bool, error) {
	if r.ServerID != "" && !r.ServerPending && mc.spec.RootDiskSizeGB == nil && p.owned.take(mc.m.UID, r.ServerID) {
		// The cloud showed this server carrying the Machine's marker (Get), so the first call
		// deletes it without a GET; a server booted from a volume is read first, for the
		// volume's ID. take forgets the answer: later calls read the server, to see it gone.
		err := servers.Delete(ctx, mc.compute, r.ServerID).ExtractErr()
		switch {
		case isNotFound(err):
			r.ServerID, r.ServerPending, r.Replacing = "", false, false
			return true, nil
		case err != nil:
			return false, classify(err, "deleting server "+r.ServerID)
		}
		return false, nil
	}
	search := r.ServerPending
	var found []servers.Server
	if r.ServerID != "" && !r.ServerPending {
		srv, err := servers.Get(ctx, mc.compute, r.ServerID).Extract()
		switch {
		case isNotFound(err):
		case err != nil:
			return false, classify(err, "getting server "+r.ServerID)
		case p.owner.foreign(srv, mc.m.UID):
			// Another machine-controller made it for this Machine: adopted first, so that the
			// delete, like every other, goes only to a server that carries this cluster's marks.
			if err := p.adopt(ctx, mc, srv); err != nil {
				return false, err
			}
			found = append(found, *srv)
		case p.owner.server(srv, mc.m.UID):
			found = append(found, *srv)
		default:
			search = true // not ours, whatever the record says
		}
	}
	if search {
		all, err := p.serversNamed(ctx, mc)
		if err != nil {
			return false, err
		}
		found = all
	}
	if len(found) == 0 {
		r.ServerID, r.ServerPending, r.Replacing = "", false, false
		return true, nil
	}
	vols := len(r.VolumeIDs)
	for i := range found {
		r.VolumeIDs = appendNew(r.VolumeIDs, p.bootVolumes(mc, &found[i])...)
	}
	if len(r.VolumeIDs) != vols {
		if err := p.records.save(ctx, mc.m, update, r); err != nil {
			return false, err
		}
	}
	// Nova deletes asynchronously: only a 404 proves a server gone, and a GET right after the
	// DELETE would almost always find it still there. Each server found above is therefore
	// still there for this call; the next call's GET (the one above) sees the 404.
	remaining := 0
	for _, srv := range found {
		if srv.TaskState != "deleting" {
			err := servers.Delete(ctx, mc.compute, srv.ID).ExtractErr()
			if isNotFound(err) {
				continue
			}
			if err != nil {
				return false, classify(err, "deleting server "+srv.ID)
			}
		}
		remaining++
	}
	if remaining > 0 {
		return false, nil
	}
	r.ServerID, r.ServerPending, r.Replacing = "", false, false
	return true, nil
}

// deleteFloatingIPs releases the Machine's floating IPs: those recorded, once the cloud confirms
// they carry the Machine's marker, and those found by it.
func (p *Provider) deleteFloatingIPs(ctx context.Context, mc *machine, r *record) error {
	if r.FloatingIPPending {
		found, err := p.floatingIPsOf(ctx, mc)
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
		fip, err := floatingips.Get(ctx, mc.s.network, id).Extract()
		switch {
		case isNotFound(err):
			continue
		case err != nil:
			errs = append(errs, classify(err, "getting floating IP "+id))
		case fip.Description != p.owner.marker(mc.m):
			continue // not ours: forgotten, never released
		default:
			if err := floatingips.Delete(ctx, mc.s.network, id).ExtractErr(); err == nil || isNotFound(err) {
				continue
			} else {
				errs = append(errs, classify(err, "releasing floating IP "+id))
			}
		}
		kept = append(kept, id)
	}
	r.FloatingIPs = kept
	return errors.Join(errs...)
}

// deletePort deletes the Machine's port: the recorded one once the cloud confirms it carries the
// Machine's marker, and those found by it.
func (p *Provider) deletePort(ctx context.Context, mc *machine, r *record) error {
	if r.PortPending {
		found, err := p.portsOf(ctx, mc)
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
	port, err := ports.Get(ctx, mc.s.network, r.PortID).Extract()
	switch {
	case isNotFound(err):
	case err != nil:
		return classify(err, "getting port "+r.PortID)
	case port.Description != p.owner.marker(mc.m):
		// not ours: forgotten, never deleted
	default:
		if err := ports.Delete(ctx, mc.s.network, r.PortID).ExtractErr(); err != nil && !isNotFound(err) {
			return classify(err, "deleting port "+r.PortID)
		}
	}
	r.PortID = ""
	return nil
}

// deleteVolumes checks the boot volumes once their server is gone. Nova deletes them with the
// server; one that survived (Nova's volume call failed) is deleted here, but only when this
// process saw it attached to the Machine's own server: a detached volume carries nothing that
// proves whose it was, and a recorded ID alone is no proof. An unconfirmed survivor is left
// alone and forgotten.
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
		if !p.volumes.confirmed(mc.m.UID, id) {
			continue
		}
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
