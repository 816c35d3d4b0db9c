package openstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// cloudIDs is everything a cloud holds, by ID.
func cloudIDs(sim *openstacktest.Sim) []string {
	var ids []string
	for _, s := range sim.Servers() {
		ids = append(ids, "server "+s.ID)
	}
	for _, p := range sim.Ports() {
		ids = append(ids, "port "+p.ID)
	}
	for _, f := range sim.FloatingIPs() {
		ids = append(ids, "fip "+f.ID)
	}
	for _, v := range sim.Volumes() {
		ids = append(ids, "volume "+v.ID+" "+v.Status)
	}
	slices.Sort(ids)
	return ids
}

// TestForgedStateDeletesNothingForeign: a Machine whose state annotation or providerID names
// resources it does not own (another Machine's in this cluster, another cluster's of the same
// name, a detached volume) gets no server from Get, and its Delete finishes without touching any
// of them: ownership is what the cloud says, never what the Machine says.
func TestForgedStateDeletesNothingForeign(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	p := newProvider(t, sim, openstack.Options{})
	foreign := newProvider(t, sim, openstack.Options{ClusterUID: "6f1d2f0e-3c1b-4a55-8e1e-0d3c9f7a5b22"})
	cps := spec(sim, map[string]any{"floatingIpPool": "public", "rootDiskSizeGB": 10})
	create := func(p *openstack.Provider) *v1alpha1.Machine {
		m := newMachine(t, cps)
		st := newStore(m)
		if _, err := p.Create(ctx, m, st.update, ""); err != nil {
			t.Fatal(err)
		}
		waitRunning(t, p, st.machine())
		return st.machine()
	}
	sibling := create(p)        // another Machine of this cluster
	stranger := create(foreign) // a Machine of another cluster with the same name
	// A detached volume: the boot volume of a server of the other cluster that vanished.
	sim.LeakBootVolumes(true)
	gone := create(foreign)
	var goneServer string
	for _, s := range sim.Servers() {
		if s.Metadata[openstack.MachineUIDKey] == string(gone.UID) {
			goneServer = s.ID
		}
	}
	if err := sim.VanishServer(goneServer); err != nil {
		t.Fatal(err)
	}
	sim.LeakBootVolumes(false)

	var state struct {
		ServerID    string   `json:"serverID"`
		PortID      string   `json:"portID"`
		FloatingIPs []string `json:"floatingIPs"`
		VolumeIDs   []string `json:"volumeIDs"`
	}
	for _, s := range sim.Servers() {
		if s.Metadata[openstack.MachineUIDKey] == string(stranger.UID) {
			state.ServerID = s.ID
		}
	}
	for _, port := range sim.Ports() {
		if strings.Contains(port.Description, string(stranger.UID)) {
			state.PortID = port.ID
		}
	}
	for _, f := range sim.FloatingIPs() {
		state.FloatingIPs = append(state.FloatingIPs, f.ID) // the sibling's and the stranger's
	}
	for _, v := range sim.Volumes() {
		state.VolumeIDs = append(state.VolumeIDs, v.ID) // attached ones and the detached one
	}
	raw, _ := json.Marshal(state)
	if state.ServerID == "" || state.PortID == "" || len(state.FloatingIPs) != 3 || len(state.VolumeIDs) != 3 {
		t.Fatalf("the setup is incomplete: %s", raw)
	}
	siblingID := findID(t, sim.Servers(), func(s openstacktest.Server) bool {
		return s.Metadata[openstack.MachineUIDKey] == string(sibling.UID)
	}, func(s openstacktest.Server) string { return s.ID })

	before := cloudIDs(sim)
	for name, forge := range map[string]func(m *v1alpha1.Machine){
		"state annotation": func(m *v1alpha1.Machine) { m.Annotations = map[string]string{openstack.StateAnnotation: string(raw)} },
		"providerID":       func(m *v1alpha1.Machine) { m.Spec.ProviderID = ptr("openstack:///" + siblingID) },
	} {
		t.Run(name, func(t *testing.T) {
			m := newMachine(t, cps)
			forge(m)
			st := newStore(m)
			if inst, err := p.Get(ctx, st.machine()); !errors.Is(err, cloud.ErrInstanceNotFound) {
				t.Fatalf("Get found %+v (%v); the named server is not this Machine's", inst, err)
			}
			if m.Spec.ProviderID == nil {
				// The Machine gets a server of its own, with a port and a floating IP of its own:
				// not the ones its annotation names.
				inst, err := p.Create(ctx, st.machine(), st.update, "")
				if err != nil {
					t.Fatal(err)
				}
				for _, port := range sim.Ports() {
					if port.ID == state.PortID && port.DeviceID != state.ServerID {
						t.Fatalf("the other cluster's port %s was moved to server %s", port.ID, port.DeviceID)
					}
				}
				for _, f := range sim.FloatingIPs() {
					if slices.Contains(state.FloatingIPs, f.ID) && strings.Contains(f.PortID, inst.ID) {
						t.Fatalf("floating IP %s was given to the new server", f.ID)
					}
				}
				waitRunning(t, p, st.machine())
			}
			deleteAll(t, newProvider(t, sim, openstack.Options{}), st) // a restarted controller
			deleteAll(t, p, st)
			if after := cloudIDs(sim); !slices.Equal(before, after) {
				t.Fatalf("the cloud changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
