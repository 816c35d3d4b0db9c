package openstacktest

import (
	"context"
	"fmt"
	"maps"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// KubermaticServer describes a worker server as Kubermatic's machine-controller creates it, for
// tests of adopting the Machines it left behind.
type KubermaticServer struct {
	// Name is the server's name: the Machine's name.
	Name string
	// MachineUID goes into the server's only mark, the metadata key machine-uid.
	MachineUID string
	// Flavor, Image and Network are names; the server gets one port on the network, made by
	// Nova, in the security group "default".
	Flavor, Image, Network string
	// Metadata is the spec's tags, which Kubermatic's controller sends as metadata.
	Metadata map[string]string
	// FloatingIPPool, when set, names the external network a floating IP is allocated from and
	// attached to the server's port, as Kubermatic's controller does once the port is active.
	FloatingIPPool string
}

// CreateAsKubermatic creates a server through the API, with the project's user, the way
// Kubermatic's machine-controller does: by network UUID, no Nova tags, machine-uid metadata. It
// waits until the server is ACTIVE, and returns its ID and the floating IP's ID, if any.
func (s *Sim) CreateAsKubermatic(ctx context.Context, k KubermaticServer) (serverID, floatingIPID string, err error) {
	pc, err := s.ProjectClient(ctx)
	if err != nil {
		return "", "", err
	}
	eo := gophercloud.EndpointOpts{Region: s.Region()}
	compute, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		return "", "", err
	}
	network, err := openstack.NewNetworkV2(pc, eo)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	flavor, image, net, pool := "", "", "", ""
	for _, f := range s.st.flavors {
		if f.Name == k.Flavor {
			flavor = f.ID
		}
	}
	for _, im := range s.st.images {
		if im.Name == k.Image {
			image = im.ID
		}
	}
	for _, n := range s.st.networks {
		switch n.Name {
		case k.Network:
			net = n.ID
		case k.FloatingIPPool:
			pool = n.ID
		}
	}
	s.mu.Unlock()
	if flavor == "" || image == "" || net == "" || (k.FloatingIPPool != "" && pool == "") {
		return "", "", fmt.Errorf("flavor %q, image %q, network %q or pool %q does not exist", k.Flavor, k.Image, k.Network, k.FloatingIPPool)
	}
	md := maps.Clone(k.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	md["machine-uid"] = k.MachineUID
	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: k.Name, FlavorRef: flavor, ImageRef: image,
		Networks: []servers.Network{{UUID: net}}, SecurityGroups: []string{"default"}, Metadata: md}, nil).Extract()
	if err != nil {
		return "", "", fmt.Errorf("creating server %s: %w", k.Name, err)
	}
	if err := servers.WaitForStatus(ctx, compute, srv.ID, "ACTIVE"); err != nil {
		return srv.ID, "", fmt.Errorf("waiting for server %s: %w", k.Name, err)
	}
	if k.FloatingIPPool == "" {
		return srv.ID, "", nil
	}
	pages, err := ports.List(network, ports.ListOpts{DeviceID: srv.ID}).AllPages(ctx)
	if err != nil {
		return srv.ID, "", err
	}
	list, err := ports.ExtractPorts(pages)
	if err != nil || len(list) != 1 {
		return srv.ID, "", fmt.Errorf("server %s has %d ports (%v)", k.Name, len(list), err)
	}
	fip, err := floatingips.Create(ctx, network, floatingips.CreateOpts{FloatingNetworkID: pool, PortID: list[0].ID}).Extract()
	if err != nil {
		return srv.ID, "", fmt.Errorf("allocating a floating IP for server %s: %w", k.Name, err)
	}
	return srv.ID, fip.ID, nil
}
