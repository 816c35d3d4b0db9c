package hosts_test

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// TestProviderNetwork maps a Neutron network onto an existing Docker network, as a provider
// network maps onto a physical one: a server on it takes an address from the subnet's pool and
// reaches, and is reached by, a machine that was already on that network.
func TestProviderNetwork(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const dockerNet, cloudName = "slipway-os-providertest", "provtest"
	docker := func(args ...string) string {
		t.Helper()
		out, err := sandboxapi.Docker(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	_, _ = sandboxapi.Docker(ctx, "rm", "-f", dockerNet+"-peer")
	_, _ = sandboxapi.Docker(ctx, "network", "rm", dockerNet)
	docker("network", "create", "--internal", "--subnet", "10.241.11.0/24", "--gateway", "10.241.11.1", dockerNet)
	t.Cleanup(func() { _, _ = sandboxapi.Docker(context.Background(), "network", "rm", dockerNet) })
	img, err := hosts.NodeImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A machine that is already there: it listens on a port the server will dial.
	docker("run", "-d", "--name", dockerNet+"-peer", "--network", dockerNet, "--ip", "10.241.11.10",
		"--entrypoint", "sh", img, "-c", "exec socat TCP-LISTEN:7000,fork,reuseaddr EXEC:'echo peer'")
	t.Cleanup(func() { _, _ = sandboxapi.Docker(context.Background(), "rm", "-f", dockerNet+"-peer") })

	b, err := hosts.New(ctx, hosts.Options{Name: cloudName, Log: testLog{t}, ProviderNetworks: map[string]string{"provider": dockerNet}})
	if err != nil {
		t.Fatal(err)
	}
	sim := openstacktest.New(openstacktest.Options{Hypervisor: b})
	t.Cleanup(func() {
		sim.Close()
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
		if out, err := sandboxapi.Docker(context.Background(), "network", "ls", "-q", "--filter", "name=^"+dockerNet+"$"); err != nil || out == "" {
			t.Errorf("the backend removed the provider network's Docker network (%v)", err)
		}
	})
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
		Username: openstacktest.Username, Password: openstacktest.Password,
		DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName})
	if err != nil {
		t.Fatal(err)
	}
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	network, _ := openstack.NewNetworkV2(pc, eo)
	compute, _ := openstack.NewComputeV2(pc, eo)
	n, err := networks.Create(ctx, network, networks.CreateOpts{Name: "provider"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	gw := "10.241.11.1"
	if _, err := subnets.Create(ctx, network, subnets.CreateOpts{NetworkID: n.ID, Name: "provider-v4", IPVersion: 4,
		CIDR: "10.241.11.0/24", GatewayIP: &gw, AllocationPools: []subnets.AllocationPool{{Start: "10.241.11.200", End: "10.241.11.250"}}}).Extract(); err != nil {
		t.Fatal(err)
	}
	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "on-provider", ImageRef: sim.Images()[0].ID, FlavorRef: "2",
		Networks: []servers.Network{{UUID: n.ID}},
		UserData: []byte("#cloud-config\nruncmd:\n  - [sh, -c, 'socat -T5 - TCP:10.241.11.10:7000 > /var/tmp/peer']\n")}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var addr string
	poll(t, ctx, "server ACTIVE on the provider network", func() bool {
		s, err := servers.Get(ctx, compute, srv.ID).Extract()
		if err != nil || s.Status != "ACTIVE" {
			return false
		}
		for _, a := range s.Addresses["provider"].([]any) {
			addr, _ = a.(map[string]any)["addr"].(string)
		}
		return true
	})
	if addr != "10.241.11.200" {
		t.Fatalf("server address %q, want the pool's first, 10.241.11.200", addr)
	}
	// The machine that was there reaches the server, and the server reached it (its user-data).
	poll(t, ctx, "the server's sshd from the peer", func() bool {
		out, err := sandboxapi.Docker(ctx, "exec", dockerNet+"-peer", "sh", "-c", "timeout 2 socat -T2 - TCP:"+addr+":22 </dev/null | head -c 4")
		return err == nil && out == "SSH-"
	})
	host := docker("ps", "-q", "--filter", "label=dev.slipway.openstack.server="+srv.ID)
	poll(t, ctx, "the server's user-data reached the peer", func() bool {
		out, err := sandboxapi.Docker(ctx, "exec", host, "cat", "/var/tmp/peer")
		return err == nil && out == "peer"
	})
}
