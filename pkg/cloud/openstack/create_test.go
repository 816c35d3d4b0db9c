package openstack_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestCreateVariants creates, inspects and deletes one machine per variant of the spec, and
// checks the cloud's side of every feature: names and IDs, own ports on a subnet, floating
// IPs, boot from volume, server groups, zones, config drive, groups and tags.
func TestCreateVariants(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	imageID := findID(t, sim.Images(), func(i openstacktest.Image) bool { return i.Name == "ubuntu-24.04" }, func(i openstacktest.Image) string { return i.ID })
	privID, privSubnet := sim.AddNetwork("second", "10.20.0.0/24", false)
	sim.AddSubnet(privID, "second-b", "10.21.0.0/24")
	groupID := sim.AddServerGroup("spread", "anti-affinity")
	webID := sim.AddSecurityGroup("web")

	for _, tc := range []struct {
		name  string
		extra map[string]any
		check func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance)
	}{
		{"names", nil, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			if srv.ImageID != imageID || srv.FlavorID != "2" || len(sim.Ports()) != 1 || !sim.Ports()[0].NovaOwned {
				t.Errorf("server %+v", srv)
			}
		}},
		{"ids", map[string]any{"image": imageID, "flavor": "3", "network": privID}, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			if srv.FlavorID != "3" || inst.CPUs != 2 || inst.MemoryMiB != 4096 {
				t.Errorf("flavor %s, hardware %d CPUs %d MiB", srv.FlavorID, inst.CPUs, inst.MemoryMiB)
			}
		}},
		{"subnet", map[string]any{"network": "second", "subnet": "second-b"}, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			ports := sim.Ports()
			if len(ports) != 1 || ports[0].NovaOwned || ports[0].FixedIPs[0].SubnetID == privSubnet {
				t.Fatalf("want our own port on second-b, got %+v", ports)
			}
			if a := inst.Addresses; len(a) != 1 || a[0].Type != corev1.NodeInternalIP || a[0].Address[:6] != "10.21." {
				t.Errorf("addresses %v", a)
			}
		}},
		{"floating ip", map[string]any{"floatingIpPool": "public", "securityGroups": []string{"web", "default"}}, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			fips, ports := sim.FloatingIPs(), sim.Ports()
			if len(fips) != 1 || len(ports) != 1 || fips[0].PortID != ports[0].ID {
				t.Fatalf("floating IPs %+v ports %+v", fips, ports)
			}
			if !slices.Contains(ports[0].SecurityGroupIDs, webID) || len(ports[0].SecurityGroupIDs) != 2 {
				t.Errorf("port security groups %v", ports[0].SecurityGroupIDs)
			}
			if !slices.Contains(inst.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: fips[0].Address}) {
				t.Errorf("addresses %v lack the floating IP %s", inst.Addresses, fips[0].Address)
			}
		}},
		{"boot from volume", map[string]any{"rootDiskSizeGB": 30, "rootDiskVolumeType": "ssd"}, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			vols := sim.Volumes()
			if len(vols) != 1 || vols[0].Size != 30 || vols[0].VolumeType != "ssd" || !vols[0].DeleteOnTermination || srv.ImageID != "" {
				t.Errorf("volumes %+v, server image %q", vols, srv.ImageID)
			}
		}},
		{"placement", map[string]any{"serverGroup": "spread", "availabilityZone": "nova", "configDrive": true, "securityGroups": []string{webID}},
			func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
				if srv.ServerGroupID != groupID || srv.AvailabilityZone != "nova" || !srv.ConfigDrive || !slices.Equal(srv.SecurityGroups, []string{"web"}) {
					t.Errorf("server %+v", srv)
				}
			}},
		{"tags", map[string]any{"tags": map[string]string{"team": "infra"}}, func(t *testing.T, srv openstacktest.Server, inst *cloud.Instance) {
			want := map[string]string{"team": "infra", "machine-uid": inst.MachineUID, "slipway-cluster": testCluster,
				"slipway-cluster-uid": testClusterUID}
			wantTags := []string{"slipway-cluster-uid=" + testClusterUID, "slipway-cluster=" + testCluster}
			if !maps.Equal(srv.Metadata, want) || !slices.Equal(srv.Tags, wantTags) {
				t.Errorf("metadata %v tags %v, want %v and %v", srv.Metadata, srv.Tags, want, wantTags)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(t, spec(sim, tc.extra))
			st := newStore(m)
			if err := p.Validate(ctx, m); err != nil {
				t.Fatalf("validate: %v", err)
			}
			inst, err := p.Create(ctx, m, st.update, "#cloud-config\n")
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if inst.State != cloud.StateCreating || inst.MachineUID != string(m.UID) || inst.ProviderID != "openstack:///"+inst.ID {
				t.Fatalf("instance %+v", inst)
			}
			again, err := p.Create(ctx, st.machine(), st.update, "#cloud-config\n")
			if err != nil || again.ID != inst.ID {
				t.Fatalf("a second Create must return the same server: %+v, %v", again, err)
			}
			inst = waitRunning(t, p, st.machine())
			srv, _ := sim.Server(inst.ID)
			if string(srv.UserData) != "#cloud-config\n" || srv.Name != m.Name {
				t.Errorf("user-data %q name %q", srv.UserData, srv.Name)
			}
			tc.check(t, srv, inst)
			if n := len(sim.Servers()); n != 1 {
				t.Fatalf("%d servers, want 1", n)
			}
			deleteAll(t, p, st)
			assertEmpty(t, sim)
			if _, err := p.Get(ctx, st.machine()); err != cloud.ErrInstanceNotFound {
				t.Fatalf("Get after delete: %v", err)
			}
		})
	}
}

func TestLookupsAreCachedAndGetIsFreeBeforeCreate(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	extra := map[string]any{"subnet": "private-subnet", "securityGroups": []string{"default"}}
	if _, err := p.Get(ctx, newMachine(t, spec(sim, extra))); err != cloud.ErrInstanceNotFound {
		t.Fatalf("Get before any create: %v", err)
	}
	if n := sim.Calls().Total; n != 0 {
		t.Fatalf("Get before any create made %d calls", n)
	}
	for range 10 {
		m := newMachine(t, spec(sim, extra))
		if _, err := p.Create(ctx, m, newStore(m).update, ""); err != nil {
			t.Fatal(err)
		}
	}
	calls := sim.Calls()
	for route, want := range map[string]int{
		"POST /identity/v3/auth/tokens":     1,
		"GET /compute/v2.1/flavors/{id}":    1, // by ID first: "m1.small" is not an ID
		"GET /compute/v2.1/flavors/detail":  1,
		"GET /image/v2/images":              1,
		"GET /network/v2.0/networks":        1,
		"GET /network/v2.0/subnets":         1,
		"GET /network/v2.0/security-groups": 1,
		"POST /network/v2.0/ports":          10,
		"POST /compute/v2.1/servers":        10,
	} {
		if got := calls.ByRoute[route]; got != want {
			t.Errorf("%s: %d calls, want %d", route, got, want)
		}
	}
}

// TestInstanceCache: a building server is answered from memory for BuildingTTL and a running
// one for InstanceTTL, then looked up again.
func TestInstanceCache(t *testing.T) {
	sim := newSim(t, openstacktest.Options{BuildTime: 50 * time.Millisecond})
	p := newProvider(t, sim, openstack.Options{InstanceTTL: 300 * time.Millisecond, BuildingTTL: 100 * time.Millisecond})
	ctx := context.Background()
	m := newMachine(t, spec(sim, nil))
	st := newStore(m)
	inst, err := p.Create(ctx, m, st.update, "")
	if err != nil {
		t.Fatal(err)
	}
	gets := func() int { return sim.Calls().ByRoute["GET /compute/v2.1/servers/{id}"] }
	if i, _ := p.Get(ctx, st.machine()); i.State != cloud.StateCreating || gets() != 0 {
		t.Fatalf("right after create: %+v from %d lookups; want Creating from memory", i, gets())
	}
	waitRunning(t, p, st.machine())
	before := gets()
	for range 5 {
		if i, err := p.Get(ctx, st.machine()); err != nil || i.State != cloud.StateRunning || i.ID != inst.ID {
			t.Fatalf("cached get: %+v %v", i, err)
		}
	}
	if n := gets() - before; n != 0 {
		t.Fatalf("%d lookups within the TTL, want 0", n)
	}
	if err := sim.VanishServer(inst.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := p.Get(ctx, st.machine()); err != cloud.ErrInstanceNotFound {
		t.Fatalf("after the TTL a vanished server must be noticed, got %v", err)
	}
}
