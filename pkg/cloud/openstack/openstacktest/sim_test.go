package openstacktest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

type clients struct {
	compute, network, image, volume *gophercloud.ServiceClient
}

func connect(t *testing.T, sim *openstacktest.Sim, opts gophercloud.AuthOptions) clients {
	t.Helper()
	ctx := context.Background()
	pc, err := openstack.AuthenticatedClient(ctx, opts)
	if err != nil {
		t.Fatalf("authenticating: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	var c clients
	for _, f := range []struct {
		dst **gophercloud.ServiceClient
		new func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{{&c.compute, openstack.NewComputeV2}, {&c.network, openstack.NewNetworkV2},
		{&c.image, openstack.NewImageV2}, {&c.volume, openstack.NewBlockStorageV3}} {
		if *f.dst, err = f.new(pc, eo); err != nil {
			t.Fatalf("service client: %v", err)
		}
	}
	c.compute.Microversion = "2.52"
	return c
}

func passwordAuth(sim *openstacktest.Sim) gophercloud.AuthOptions {
	return gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(), Username: openstacktest.Username,
		Password: openstacktest.Password, DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName}
}

func TestAuthentication(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts gophercloud.AuthOptions
		ok   bool
	}{
		{"password", passwordAuth(sim), true},
		{"versionless endpoint", func() gophercloud.AuthOptions {
			o := passwordAuth(sim)
			o.IdentityEndpoint = sim.URL() + "/identity"
			return o
		}(), true},
		{"application credential", gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
			ApplicationCredentialID: openstacktest.AppCredID, ApplicationCredentialSecret: openstacktest.AppCredSecret}, true},
		{"wrong password", func() gophercloud.AuthOptions {
			o := passwordAuth(sim)
			o.Password = "nope"
			return o
		}(), false},
		{"wrong project", func() gophercloud.AuthOptions {
			o := passwordAuth(sim)
			o.TenantName = "other"
			return o
		}(), false},
		{"wrong application credential secret", gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
			ApplicationCredentialID: openstacktest.AppCredID, ApplicationCredentialSecret: "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openstack.AuthenticatedClient(ctx, tc.opts)
			if tc.ok && err != nil {
				t.Fatalf("want success, got %v", err)
			}
			if !tc.ok && !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
				t.Fatalf("want 401, got %v", err)
			}
		})
	}
}

func TestTokenExpiryReauthenticates(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	opts := passwordAuth(sim)
	opts.AllowReauth = true
	c := connect(t, sim, opts)
	sim.ExpireTokens()
	if _, err := flavors.Get(context.Background(), c.compute, "1").Extract(); err != nil {
		t.Fatalf("call after token expiry: %v", err)
	}
	if n := sim.Calls().ByRoute["POST /identity/v3/auth/tokens"]; n != 2 {
		t.Fatalf("want 2 authentications (initial and after expiry), got %d", n)
	}
}

func TestServerLifecycle(t *testing.T) {
	hv := newRecorder()
	sim := openstacktest.New(openstacktest.Options{BuildTime: 20 * time.Millisecond, Hypervisor: hv})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	img := sim.Images()[0]
	priv := findNetwork(t, sim, "private")
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{
		Name: "worker-1", ImageRef: img.ID, FlavorRef: "2", UserData: []byte("#cloud-config\n"),
		Networks: []servers.Network{{UUID: priv.ID}}, SecurityGroups: []string{"default"},
		Metadata: map[string]string{"machine-uid": "u1"}, Tags: []string{"slipway-cluster=test"},
	}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := servers.Get(ctx, c.compute, srv.ID).Extract()
	if err != nil || got.Status != "BUILD" {
		t.Fatalf("right after create: status %q, err %v; want BUILD", got.Status, err)
	}
	waitFor(t, "server ACTIVE", func() bool {
		got, err = servers.Get(ctx, c.compute, srv.ID).Extract()
		return err == nil && got.Status == "ACTIVE"
	})
	if m, n := hv.spawned(srv.ID); n != 1 || string(m.Server.UserData) != "#cloud-config\n" || m.Hostname != "worker-1" {
		t.Fatalf("Spawn ran %d times with user-data %q hostname %q; want once, the request's user-data, worker-1", n, m.Server.UserData, m.Hostname)
	}
	if got.Metadata["machine-uid"] != "u1" || got.Tags == nil || (*got.Tags)[0] != "slipway-cluster=test" {
		t.Fatalf("metadata %v tags %v not kept", got.Metadata, got.Tags)
	}
	if addrs := got.Addresses["private"]; len(addrs.([]any)) != 1 {
		t.Fatalf("want one private address, got %v", got.Addresses)
	}

	// Filters: name regex and tags.
	for _, tc := range []struct {
		name string
		opts servers.ListOpts
		want int
	}{
		{"exact name", servers.ListOpts{Name: "^worker-1$"}, 1},
		{"other name", servers.ListOpts{Name: "^worker-2$"}, 0},
		{"cluster tag", servers.ListOpts{Tags: "slipway-cluster=test"}, 1},
		{"other cluster tag", servers.ListOpts{Tags: "slipway-cluster=other"}, 0},
	} {
		pages, err := servers.List(c.compute, tc.opts).AllPages(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		all, _ := servers.ExtractServers(pages)
		if len(all) != tc.want {
			t.Errorf("%s: got %d servers, want %d", tc.name, len(all), tc.want)
		}
	}

	if err := servers.Delete(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitFor(t, "server gone", func() bool {
		_, err := servers.Get(ctx, c.compute, srv.ID).Extract()
		return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
	})
	if !hv.destroyed(srv.ID) {
		t.Fatal("the server's record went before its machine was destroyed")
	}
	if n := len(sim.Ports()); n != 0 {
		t.Fatalf("Nova's port outlived its server: %d ports left", n)
	}
}

func TestBootFromVolumeAndFloatingIP(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	img := sim.Images()[0] // min_disk 10
	priv, pub := findNetwork(t, sim, "private"), findNetwork(t, sim, "public")

	port, err := ports.Create(ctx, c.network, ports.CreateOpts{NetworkID: priv.ID, Name: "worker-1",
		FixedIPs: []ports.IP{{SubnetID: priv.SubnetIDs[0]}}}).Extract()
	if err != nil {
		t.Fatalf("port: %v", err)
	}
	fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub.ID, PortID: port.ID}).Extract()
	if err != nil || fip.Status != "ACTIVE" || fip.FixedIP != port.FixedIPs[0].IPAddress {
		t.Fatalf("floating IP: %+v, %v", fip, err)
	}
	bdm := func(size int) []servers.BlockDevice {
		return []servers.BlockDevice{{SourceType: servers.SourceImage, DestinationType: servers.DestinationVolume,
			UUID: img.ID, VolumeSize: size, DeleteOnTermination: true, VolumeType: "ssd"}}
	}
	_, err = servers.Create(ctx, c.compute, servers.CreateOpts{Name: "too-small", FlavorRef: "2",
		Networks: []servers.Network{{Port: port.ID}}, BlockDevice: bdm(5)}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "minimum size") {
		t.Fatalf("volume below min_disk: want 400, got %v", err)
	}
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: "worker-1", FlavorRef: "2",
		Networks: []servers.Network{{Port: port.ID}}, BlockDevice: bdm(20)}, nil).Extract()
	if err != nil {
		t.Fatalf("boot from volume: %v", err)
	}
	got, _ := servers.Get(ctx, c.compute, srv.ID).Extract()
	if len(got.AttachedVolumes) != 1 {
		t.Fatalf("want one attached volume, got %v", got.AttachedVolumes)
	}
	vol, err := volumes.Get(ctx, c.volume, got.AttachedVolumes[0].ID).Extract()
	if err != nil || vol.Status != "in-use" || vol.Size != 20 || vol.VolumeType != "ssd" {
		t.Fatalf("boot volume: %+v, %v", vol, err)
	}
	if _, err := ports.Create(ctx, c.network, ports.CreateOpts{NetworkID: priv.ID,
		FixedIPs: []ports.IP{{IPAddress: port.FixedIPs[0].IPAddress}}}).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Fatalf("duplicate fixed IP: want 409, got %v", err)
	}

	if err := servers.Delete(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := volumes.Get(ctx, c.volume, vol.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("delete-on-termination volume survived: %v", err)
	}
	p, err := ports.Get(ctx, c.network, port.ID).Extract()
	if err != nil || p.DeviceID != "" {
		t.Fatalf("a caller's port must survive its server, detached: %+v, %v", p, err)
	}
	if f, _ := floatingips.Get(ctx, c.network, fip.ID).Extract(); f.PortID != port.ID {
		t.Fatalf("floating IP lost its port association: %+v", f)
	}
	if err := ports.Delete(ctx, c.network, port.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if f, _ := floatingips.Get(ctx, c.network, fip.ID).Extract(); f.PortID != "" || f.Status != "DOWN" {
		t.Fatalf("floating IP still associated with a deleted port: %+v", f)
	}
}

func findNetwork(t *testing.T, sim *openstacktest.Sim, name string) openstacktest.Network {
	t.Helper()
	for _, n := range sim.Networks() {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no network %q", name)
	return openstacktest.Network{}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
