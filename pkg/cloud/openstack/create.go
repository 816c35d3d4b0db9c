package openstack

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Create makes sure the Machine has a server. It resumes whatever an earlier, interrupted call
// started: the recorded server is returned unchanged, and a recorded port or floating IP is
// reused. An ERROR server is deleted and, after a backoff, replaced, up to MaxCreateAttempts.
func (p *Provider) Create(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater, userdata string) (*cloud.Instance, error) {
	p.running.forget(m.UID)
	r, err := p.records.load(m)
	if err != nil {
		return nil, err
	}
	mc, err := p.prepare(ctx, m)
	if err != nil {
		return nil, err
	}
	t, err := p.resolve(ctx, mc.s, mc.spec)
	if err != nil {
		return nil, err
	}
	srv, err := p.findServer(ctx, mc, r)
	if err != nil {
		return nil, err
	}
	if srv != nil {
		return p.existing(ctx, mc, r, srv, update)
	}
	if r.ServerID != "" || r.ServerPending {
		r.ServerID, r.ServerPending = "", false // gone: deleted as an ERROR server, or behind our back
	}
	if r.Attempts >= p.opts.MaxCreateAttempts {
		return nil, cloud.Terminal(v1alpha1.CreateMachineError,
			"%d servers went to ERROR, the last with fault: %s", r.Attempts, r.LastFault)
	}
	if now := p.opts.Now(); r.RetryAt != nil && now.Before(*r.RetryAt) {
		return nil, fmt.Errorf("replacing the ERROR server of machine %s after %s (last fault: %s)",
			m.Name, r.RetryAt.Sub(now).Round(time.Second), r.LastFault)
	}
	if err := p.ensureNetworking(ctx, mc, t, r, update); err != nil {
		return nil, err
	}
	return p.createServer(ctx, mc, t, r, update, userdata)
}

// existing handles a Create for a Machine that has a server: record it, wait while it is being
// deleted, or replace it when it is in ERROR.
func (p *Provider) existing(ctx context.Context, mc *machine, r *record, srv *servers.Server, update cloud.MachineUpdater) (*cloud.Instance, error) {
	if r.ServerID != srv.ID || r.ServerPending {
		if r.derived {
			// Nothing recorded what else was allocated for the server (a record rebuilt from the
			// providerID, or an adopted server): the record says to search for it, as Delete
			// does for a derived record, or it would never be released.
			r.PortPending = r.PortPending || mc.spec.ownPort()
			r.FloatingIPPending = r.FloatingIPPending || mc.spec.FloatingIPPool != ""
		}
		r.ServerID, r.ServerPending = srv.ID, false
		if err := p.records.save(ctx, mc.m, update, r); err != nil {
			return nil, err
		}
	}
	switch state(srv) {
	case cloud.StateError:
		return nil, p.replace(ctx, mc, r, srv, update)
	case cloud.StateDeleting:
		return nil, fmt.Errorf("waiting for server %s of machine %s to be deleted before replacing it", srv.ID, mc.m.Name)
	}
	return p.instance(ctx, mc, srv), nil
}

// replace deletes an ERROR server and schedules its successor after a backoff that doubles
// with every attempt. The fault message goes into the returned error, and so into the
// Machine's condition.
func (p *Provider) replace(ctx context.Context, mc *machine, r *record, srv *servers.Server, update cloud.MachineUpdater) error {
	fault := srv.Fault.Message
	if fault == "" {
		fault = "no fault message"
	}
	r.LastFault, r.Replacing = fault, r.Attempts < p.opts.MaxCreateAttempts
	r.VolumeIDs = appendNew(r.VolumeIDs, p.bootVolumes(mc, srv)...)
	backoff := p.opts.ErrorBackoff << max(r.Attempts-1, 0)
	backoff = min(backoff, 10*time.Minute)
	at := p.opts.Now().Add(backoff)
	r.RetryAt = &at
	if err := p.records.save(ctx, mc.m, update, r); err != nil {
		return err
	}
	if err := servers.Delete(ctx, mc.compute, srv.ID).ExtractErr(); err != nil && !isNotFound(err) {
		return classify(err, fmt.Sprintf("deleting ERROR server %s (fault: %s)", srv.ID, fault))
	}
	if !r.Replacing {
		return cloud.Terminal(v1alpha1.CreateMachineError, "server %s went to ERROR, attempt %d of %d: %s",
			srv.ID, r.Attempts, p.opts.MaxCreateAttempts, fault)
	}
	return fmt.Errorf("server %s went to ERROR (attempt %d of %d): %s; replacing it in %s",
		srv.ID, r.Attempts, p.opts.MaxCreateAttempts, fault, backoff)
}

// createServer sends the server create, with the intent recorded first.
func (p *Provider) createServer(ctx context.Context, mc *machine, t *target, r *record, update cloud.MachineUpdater, userdata string) (*cloud.Instance, error) {
	spec, m := mc.spec, mc.m
	md := maps.Clone(spec.Tags)
	if md == nil {
		md = map[string]string{}
	}
	md[MachineUIDKey], md[ClusterKey], md[ClusterUIDKey] = string(m.UID), p.cluster, p.owner.clusterUID
	opts := servers.CreateOpts{
		Name: m.Name, FlavorRef: t.flavor.ID, ImageRef: t.image.ID, Metadata: md,
		AvailabilityZone: spec.AvailabilityZone,
		// Encoded here: gophercloud passes data through unencoded when it happens to be base64.
		UserData: []byte(base64.StdEncoding.EncodeToString([]byte(userdata))),
	}
	if spec.ConfigDrive {
		opts.ConfigDrive = &spec.ConfigDrive
	}
	if mc.mv >= 52 {
		opts.Tags = []string{p.owner.tag(), nameTag(p.cluster)}
	}
	if r.PortID != "" {
		opts.Networks = []servers.Network{{Port: r.PortID}}
	} else {
		opts.Networks = []servers.Network{{UUID: t.network.ID}}
		for _, g := range t.groups {
			opts.SecurityGroups = append(opts.SecurityGroups, g.ID)
		}
	}
	if spec.RootDiskSizeGB != nil {
		opts.ImageRef = ""
		opts.BlockDevice = []servers.BlockDevice{{SourceType: servers.SourceImage, DestinationType: servers.DestinationVolume,
			UUID: t.image.ID, VolumeSize: *spec.RootDiskSizeGB, VolumeType: spec.RootDiskVolumeType, DeleteOnTermination: true}}
	}
	var hints servers.SchedulerHintOptsBuilder
	if t.serverGroupID != "" {
		hints = servers.SchedulerHintOpts{Group: t.serverGroupID}
	}

	r.ServerPending, r.Replacing = true, false
	r.Attempts++
	if err := p.records.save(ctx, m, update, r); err != nil {
		return nil, err
	}
	created, err := servers.Create(ctx, mc.compute, opts, hints).Extract()
	if err != nil {
		if rejected(err) { // nothing was created: do not search for it later
			r.ServerPending = false
			r.Attempts--
			if serr := p.records.save(ctx, m, update, r); serr != nil {
				return nil, serr
			}
		}
		if code, msg := statusOf(err); code == http.StatusBadRequest {
			return nil, invalid("creating server %s: %s", m.Name, msg)
		}
		return nil, classify(err, "creating server "+m.Name)
	}
	r.ServerID, r.ServerPending = created.ID, false
	if err := p.records.save(ctx, m, update, r); err != nil {
		return nil, err
	}
	inst := &cloud.Instance{ID: created.ID, Name: m.Name, ProviderID: "openstack:///" + created.ID,
		MachineUID: string(m.UID), State: cloud.StateCreating, CPUs: t.flavor.VCPUs, MemoryMiB: t.flavor.RAM}
	p.running.put(m.UID, inst)
	return inst, nil
}

// rejected reports whether the cloud answered that it did not perform the request (a 4xx); after
// a timeout or a 5xx the request may still have taken effect.
func rejected(err error) bool {
	code, _ := statusOf(err)
	return code >= 400 && code < 500
}

// bootVolumes are the volumes that the provider asked Nova to make for srv, which must be the
// Machine's own server; they are confirmed as the Machine's for deleteVolumes.
func (p *Provider) bootVolumes(mc *machine, srv *servers.Server) []string {
	if mc.spec.RootDiskSizeGB == nil || !p.owner.server(srv, mc.m.UID) {
		return nil
	}
	var ids []string
	for _, v := range srv.AttachedVolumes {
		ids = append(ids, v.ID)
	}
	p.volumes.confirm(mc.m.UID, ids...)
	return ids
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			found = found || l == it
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}
