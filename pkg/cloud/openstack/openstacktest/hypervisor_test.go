package openstacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// recorder is a Hypervisor that runs nothing and records every call, for the Sim's own tests.
// The real one (test/openstack-sim/hosts) has its own tests against Docker.
type recorder struct {
	mu        sync.Mutex
	machines  map[string][]openstacktest.Machine
	gone      map[string]bool
	power     map[string][]openstacktest.PowerAction
	topology  openstacktest.Topology
	failSpawn error
	failPower error
}

func newRecorder() *recorder {
	return &recorder{machines: map[string][]openstacktest.Machine{}, gone: map[string]bool{},
		power: map[string][]openstacktest.PowerAction{}}
}

func (r *recorder) Spawn(ctx context.Context, m openstacktest.Machine) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.machines[m.Server.ID] = append(r.machines[m.Server.ID], m)
	return r.failSpawn
}

func (r *recorder) Destroy(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone[id] = true
	return nil
}

func (r *recorder) Power(ctx context.Context, id string, a openstacktest.PowerAction) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.power[id] = append(r.power[id], a)
	return r.failPower
}

func (r *recorder) Console(ctx context.Context, id string, lines int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.machines[id]) == 0 {
		return "", errors.New("no machine")
	}
	return "boot of " + r.machines[id][0].Hostname + "\nlogin:\n", nil
}

func (r *recorder) SyncNetwork(ctx context.Context, t openstacktest.Topology) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.topology = t
	return nil
}

func (r *recorder) spawned(id string) (openstacktest.Machine, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.machines[id]) == 0 {
		return openstacktest.Machine{}, 0
	}
	return r.machines[id][0], len(r.machines[id])
}

func (r *recorder) destroyed(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gone[id]
}

func (r *recorder) powerCalls(id string) []openstacktest.PowerAction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]openstacktest.PowerAction(nil), r.power[id]...)
}

func (r *recorder) floating() []openstacktest.FloatingMapping {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]openstacktest.FloatingMapping(nil), r.topology.FloatingIPs...)
}

func TestPowerActionsAndConsole(t *testing.T) {
	hv := newRecorder()
	sim := openstacktest.New(openstacktest.Options{Hypervisor: hv})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	priv := findNetwork(t, sim, "private")
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: "Web Server_1", ImageRef: sim.Images()[0].ID,
		FlavorRef: "3", Networks: []servers.Network{{UUID: priv.ID}}}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	status := func(want string) {
		t.Helper()
		waitFor(t, "status "+want, func() bool {
			got, err := servers.Get(ctx, c.compute, srv.ID).Extract()
			return err == nil && got.Status == want
		})
	}
	status("ACTIVE")
	m, _ := hv.spawned(srv.ID)
	if m.Hostname != "web-server-1" {
		t.Errorf("hostname %q, want Nova's web-server-1", m.Hostname)
	}
	var meta map[string]any
	if err := json.Unmarshal(m.ConfigDrive["openstack/latest/meta_data.json"], &meta); err != nil || meta["uuid"] != srv.ID {
		t.Errorf("config drive meta_data.json: %v %s", err, m.ConfigDrive["openstack/latest/meta_data.json"])
	}
	if _, ok := m.ConfigDrive["openstack/2012-08-10/meta_data.json"]; !ok {
		t.Error("config drive lacks the dated metadata version cloud-init's ds-identify looks for")
	}

	// Starting a running server is a conflict, as in Nova.
	err = servers.Start(ctx, c.compute, srv.ID).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || !strings.Contains(err.Error(), "vm_state active") {
		t.Fatalf("start of an active server: want 409 naming vm_state active, got %v", err)
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"stop", func() error { return servers.Stop(ctx, c.compute, srv.ID).ExtractErr() }, "SHUTOFF"},
		{"start", func() error { return servers.Start(ctx, c.compute, srv.ID).ExtractErr() }, "ACTIVE"},
		{"soft reboot", func() error {
			return servers.Reboot(ctx, c.compute, srv.ID, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr()
		}, "ACTIVE"},
		{"hard reboot", func() error {
			return servers.Reboot(ctx, c.compute, srv.ID, servers.RebootOpts{Type: servers.HardReboot}).ExtractErr()
		}, "ACTIVE"},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		status(st.want)
		waitFor(t, st.name+" finished", func() bool {
			got, err := servers.Get(ctx, c.compute, srv.ID).Extract()
			return err == nil && got.TaskState == ""
		})
	}
	want := []openstacktest.PowerAction{openstacktest.PowerOff, openstacktest.PowerOn, openstacktest.SoftReboot, openstacktest.HardReboot}
	if got := hv.powerCalls(srv.ID); strings.Join(actions(got), ",") != strings.Join(actions(want), ",") {
		t.Errorf("hypervisor power calls %v, want %v", got, want)
	}

	out, err := servers.ShowConsoleOutput(ctx, c.compute, srv.ID, servers.ShowConsoleOutputOpts{Length: 10}).Extract()
	if err != nil || out != "boot of web-server-1\nlogin:\n" {
		t.Fatalf("console output %q, %v", out, err)
	}

	// A failing machine puts the server in ERROR with the reason.
	hv.mu.Lock()
	hv.failPower = errors.New("host gone")
	hv.mu.Unlock()
	if err := servers.Stop(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	status("ERROR")
	got, _ := servers.Get(ctx, c.compute, srv.ID).Extract()
	if !strings.Contains(got.Fault.Message, "host gone") {
		t.Errorf("fault %q does not say why", got.Fault.Message)
	}

	// Breaking a server through the control API powers its machine off.
	hv.mu.Lock()
	hv.failPower = nil
	hv.mu.Unlock()
	if err := sim.BreakServer(srv.ID, "disk failure"); err != nil {
		t.Fatal(err)
	}
	if calls := hv.powerCalls(srv.ID); calls[len(calls)-1] != openstacktest.PowerOff {
		t.Errorf("BreakServer left the machine running: last power call %v", calls[len(calls)-1])
	}
	// Vanishing destroys the machine before it returns.
	if err := sim.VanishServer(srv.ID); err != nil || !hv.destroyed(srv.ID) {
		t.Fatalf("VanishServer: %v, machine destroyed %v", err, hv.destroyed(srv.ID))
	}
}

func TestSpawnFailureAndFloatingTopology(t *testing.T) {
	hv := newRecorder()
	hv.failSpawn = errors.New("no image on the hypervisor")
	sim := openstacktest.New(openstacktest.Options{Hypervisor: hv})
	defer sim.Close()
	ctx := context.Background()
	c := connect(t, sim, passwordAuth(sim))
	priv, pub := findNetwork(t, sim, "private"), findNetwork(t, sim, "public")
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: "vm", ImageRef: sim.Images()[0].ID,
		FlavorRef: "3", Networks: []servers.Network{{UUID: priv.ID}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ERROR", func() bool {
		got, err := servers.Get(ctx, c.compute, srv.ID).Extract()
		return err == nil && got.Status == "ERROR" && strings.Contains(got.Fault.Message, "no image on the hypervisor")
	})
	port := sim.Ports()[0]
	fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub.ID, PortID: port.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "floating IP in the topology", func() bool {
		f := hv.floating()
		return len(f) == 1 && f[0].Address == fip.FloatingIP && f[0].FixedIP == port.FixedIPs[0].IPAddress
	})
	if err := servers.Delete(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(hv.floating()) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f := hv.floating(); len(f) != 0 {
		t.Fatalf("the deleted server's floating IP still leads somewhere: %v", f)
	}
}

func actions(as []openstacktest.PowerAction) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a))
	}
	return out
}
