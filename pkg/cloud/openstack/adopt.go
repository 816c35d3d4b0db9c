package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/tags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// Adoption. Kubermatic's machine-controller names a server after its Machine and marks it with
// one metadata key, machine-uid, holding the Machine's UID; it never records the server's ID on
// the Machine. When slipway's controller takes its place, those servers are found by the
// Machine's name (v1alpha1.ServerMadeElsewhere says when to look) or by a spec.providerID, and
// adopted: they get this cluster's marks, after which every lookup, delete and orphan sweep
// treats them as servers this cluster made. Without that a Machine would get a second server,
// and its first would never be deleted.
//
// The proof is the same as for the provider's own servers, what the cloud shows: machine-uid
// equal to the Machine's UID. The API server gives every object a random UID, so no other
// Machine, and no other cluster's, can name that server; a spec.providerID or a name only says
// where to look. A server that names any slipway cluster is never adopted: if it names another
// one, it is that cluster's.

// foreign reports whether srv was made for the Machine uid by another machine-controller.
func (o owner) foreign(srv *servers.Server, uid types.UID) bool {
	return uid != "" && srv.Metadata[MachineUIDKey] == string(uid) && srv.Metadata[ClusterUIDKey] == ""
}

// adopt gives a foreign server of the Machine this cluster's marks: the Nova tags first (List
// finds servers by them), the floating IP's marker next, and the metadata last. The metadata is
// what makes the server this cluster's (owner.server), so an adoption interrupted before it is
// simply done again; every step is idempotent.
func (p *Provider) adopt(ctx context.Context, mc *machine, srv *servers.Server) error {
	if mc.mv >= 26 { // server tags exist from microversion 2.26
		for _, tag := range []string{p.owner.tag(), nameTag(p.cluster)} {
			if err := tags.Add(ctx, mc.compute, srv.ID, tag).ExtractErr(); err != nil {
				return classify(err, fmt.Sprintf("tagging server %s of machine %s for adoption", srv.ID, mc.m.Name))
			}
		}
	}
	if err := p.adoptFloatingIP(ctx, mc, srv); err != nil {
		return err
	}
	md := servers.MetadataOpts{ClusterKey: p.cluster, ClusterUIDKey: p.owner.clusterUID}
	got, err := servers.UpdateMetadata(ctx, mc.compute, srv.ID, md).Extract()
	if err != nil {
		return classify(err, fmt.Sprintf("marking server %s of machine %s as this cluster's", srv.ID, mc.m.Name))
	}
	srv.Metadata = got
	return nil
}

// adoptFloatingIP takes over the floating IP that Kubermatic's controller allocated for the
// Machine (its ID is the value of the Machine's annotation KubermaticFloatingIPFinalizer), but
// only when the cloud shows it attached to a port of the server being adopted: an annotation is
// no proof. It then gets the Machine's marker as its description, by which Delete finds and
// releases it as it does the provider's own. The port stays as it is: Nova made it with the
// server and deletes it with the server.
func (p *Provider) adoptFloatingIP(ctx context.Context, mc *machine, srv *servers.Server) error {
	id := mc.m.Annotations[v1alpha1.KubermaticFloatingIPFinalizer]
	if id == "" {
		return nil
	}
	fip, err := floatingips.Get(ctx, mc.s.network, id).Extract()
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return classify(err, "getting floating IP "+id+" of machine "+mc.m.Name)
	case fip.PortID == "" || fip.Description == p.owner.marker(mc.m):
		return nil
	}
	port, err := ports.Get(ctx, mc.s.network, fip.PortID).Extract()
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return classify(err, "getting port "+fip.PortID+" of floating IP "+id)
	case port.DeviceID != srv.ID:
		return nil // attached elsewhere: not the Machine's to release
	}
	desc := p.owner.marker(mc.m)
	// The port is given again: an update without it would detach the address.
	opts := floatingips.UpdateOpts{Description: &desc, PortID: &fip.PortID}
	if _, err := floatingips.Update(ctx, mc.s.network, id, opts).Extract(); err != nil {
		return classify(err, "marking floating IP "+id+" as machine "+mc.m.Name+"'s")
	}
	return nil
}
