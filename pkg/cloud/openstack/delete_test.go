package openstack_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func TestDeleteIsIdempotent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		extra map[string]any
		setup func(sim *openstacktest.Sim)
	}{
		{"never created", nil, nil},
		{"plain", nil, nil},
		{"slow nova delete", map[string]any{"floatingIpPool": "public"}, func(sim *openstacktest.Sim) { sim.SetDeleteTime(100 * time.Millisecond) }},
		{"boot volume survives", map[string]any{"rootDiskSizeGB": 12}, func(sim *openstacktest.Sim) { sim.LeakBootVolumes(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := newSim(t, openstacktest.Options{})
			p := newProvider(t, sim, openstack.Options{})
			m := newMachine(t, spec(sim, tc.extra))
			st := newStore(m)
			if tc.name != "never created" {
				if _, err := p.Create(ctx, m, st.update, ""); err != nil {
					t.Fatal(err)
				}
				waitRunning(t, p, st.machine())
			}
			if tc.setup != nil {
				tc.setup(sim)
			}
			sim.ResetCalls()
			deleteAll(t, p, st)
			assertEmpty(t, sim)
			if tc.name == "never created" && sim.Calls().Total != 0 {
				t.Fatalf("deleting a machine that never had a server made %d calls", sim.Calls().Total)
			}
			for range 2 {
				done, err := p.Delete(ctx, st.machine(), st.update)
				if !done || err != nil {
					t.Fatalf("repeated delete: %v %v", done, err)
				}
			}
			if v := st.machine().Annotations[openstack.StateAnnotation]; v != "" {
				t.Fatalf("state annotation left behind: %s", v)
			}
		})
	}
}

func TestDeleteWaitsForSlowServer(t *testing.T) {
	sim := newSim(t, openstacktest.Options{DeleteTime: 200 * time.Millisecond})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	m := newMachine(t, spec(sim, map[string]any{"subnet": "private-subnet"}))
	st := newStore(m)
	if _, err := p.Create(ctx, m, st.update, ""); err != nil {
		t.Fatal(err)
	}
	done, err := p.Delete(ctx, st.machine(), st.update)
	if done || err != nil {
		t.Fatalf("first delete: done=%v err=%v; the server is still being deleted", done, err)
	}
	if len(sim.Ports()) != 1 {
		t.Fatalf("the port must stay until its server is gone")
	}
	if inst, err := p.Get(ctx, st.machine()); err != nil || inst.State != cloud.StateDeleting {
		t.Fatalf("Get during delete: %+v %v", inst, err)
	}
	deleteAll(t, p, st)
	assertEmpty(t, sim)
}

// TestListFindsClusterServers: List returns the servers of this cluster, recognised by its UID:
// not those of another cluster in the same project, even one with the same name, which the
// orphan sweep would otherwise delete.
func TestListFindsClusterServers(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	p := newProvider(t, sim, openstack.Options{})
	sameName, err := openstack.New(testCluster, openstack.Options{LookupEnv: lookupIn(simEnv(sim)),
		ClusterUID: "6f1d2f0e-3c1b-4a55-8e1e-0d3c9f7a5b22"})
	if err != nil {
		t.Fatal(err)
	}
	otherName, err := openstack.New("other-cluster", openstack.Options{LookupEnv: lookupIn(simEnv(sim)),
		ClusterUID: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c33"})
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for range 3 {
		m := newMachine(t, spec(sim, nil))
		inst, err := p.Create(ctx, m, newStore(m).update, "")
		if err != nil {
			t.Fatal(err)
		}
		ours = append(ours, inst.ID)
	}
	for _, other := range []*openstack.Provider{sameName, otherName} {
		m := newMachine(t, spec(sim, nil))
		if _, err := other.Create(ctx, m, newStore(m).update, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, mv := range []string{"", "2.1"} { // tag filter, and metadata scan before tags existed
		tmpl := newMachine(t, spec(sim, map[string]any{"computeAPIVersion": mv}))
		list, err := p.List(ctx, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 {
			t.Fatalf("microversion %q: listed %d servers, want our 3", mv, len(list))
		}
		for _, inst := range list {
			if inst.MachineUID == "" || inst.ProviderID == "" || !slices.Contains(ours, inst.ID) {
				t.Fatalf("listed a server that is not ours, or without machine UID or provider ID: %+v", inst)
			}
		}
	}
}

// TestDeleteOrphanFromProviderID: the orphan sweep deletes a server it found with List, through
// a Machine it makes up (name, UID, providerID and the template's spec, no annotation). The port,
// floating IP and boot volume made for the server must go too.
func TestDeleteOrphanFromProviderID(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	cps := spec(sim, map[string]any{"floatingIpPool": "public", "rootDiskSizeGB": 10})
	m := newMachine(t, cps)
	if _, err := newProvider(t, sim, openstack.Options{}).Create(ctx, m, newStore(m).update, ""); err != nil {
		t.Fatal(err)
	}
	sweeper := newProvider(t, sim, openstack.Options{}) // another process: no memory of the create
	list, err := sweeper.List(ctx, newMachine(t, cps))
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	orphan := newMachine(t, cps)
	orphan.Name, orphan.UID, orphan.Spec.ProviderID = list[0].Name, types.UID(list[0].MachineUID), &list[0].ProviderID
	noop := func(context.Context, func(*v1alpha1.Machine)) error { return nil }
	poll(t, "orphan deleted", func() bool {
		done, err := sweeper.Delete(ctx, orphan, noop)
		if err != nil {
			t.Logf("delete: %v", err)
		}
		return done
	})
	assertEmpty(t, sim)
}

// TestDeleteCalls: deleting a plain server (Nova's port) costs the DELETE and one GET per later
// call until the 404 (a restarted provider also authenticates, which is not counted here). The first call sends the DELETE without a GET when this process saw the
// cloud show the server as the Machine's (Get); a provider that did not (after a restart) reads
// the server first. No call reads the server right after its DELETE, which would find it still
// there on a real Nova.
func TestDeleteCalls(t *testing.T) {
	for _, tc := range []struct {
		name      string
		restarted bool
		firstGETs int
	}{{"seen by Get", false, 0}, {"after a restart", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			sim := newSim(t, openstacktest.Options{DeleteTime: 150 * time.Millisecond})
			p := newProvider(t, sim, openstack.Options{})
			ctx := context.Background()
			st := created(t, p, newMachine(t, spec(sim, nil)))
			waitRunning(t, p, st.machine())
			if tc.restarted {
				p = newProvider(t, sim, openstack.Options{})
			}
			const get, del = "GET /compute/v2.1/servers/{id}", "DELETE /compute/v2.1/servers/{id}"
			sim.ResetCalls()
			if done, err := p.Delete(ctx, st.machine(), st.update); done || err != nil {
				t.Fatalf("first delete: done=%v err=%v; Nova deletes asynchronously", done, err)
			}
			if c := sim.Calls(); c.ByRoute[get] != tc.firstGETs || c.ByRoute[del] != 1 {
				t.Fatalf("first delete made %v, want %d GET and one DELETE", c.ByRoute, tc.firstGETs)
			}
			later := 0
			for done := false; !done; later++ {
				var err error
				if done, err = p.Delete(ctx, st.machine(), st.update); err != nil {
					t.Fatal(err)
				}
				if !done {
					time.Sleep(50 * time.Millisecond) // the next poll of the controller
				}
			}
			c := sim.Calls()
			if c.ByRoute[del] != 1 || c.ByRoute[get] != tc.firstGETs+later {
				t.Fatalf("%d later calls of Delete made %v, want one GET each", later, c.ByRoute)
			}
			assertEmpty(t, sim)
		})
	}
}
