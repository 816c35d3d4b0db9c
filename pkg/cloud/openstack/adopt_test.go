package openstack_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// kubermaticMachine returns a Machine and its server as Kubermatic's machine-controller leaves
// them: the server named after the Machine and marked only with its UID, the Machine with
// Kubermatic's finalizers and, as point says, how it leads to its server.
func kubermaticMachine(t *testing.T, sim *openstacktest.Sim, point string, pool string) (*v1alpha1.Machine, string, string) {
	t.Helper()
	cps := spec(sim, nil)
	if pool != "" {
		cps["floatingIpPool"] = pool
	}
	m := newMachine(t, cps)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, fip, err := sim.CreateAsKubermatic(ctx, openstacktest.KubermaticServer{Name: m.Name, MachineUID: string(m.UID),
		Flavor: "m1.small", Image: "ubuntu-24.04", Network: "private", FloatingIPPool: pool, Metadata: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	switch point {
	case "finalizer":
		m.Finalizers = []string{v1alpha1.MachineFinalizer, v1alpha1.KubermaticNodeFinalizer}
	case "nodeRef":
		m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: m.Name, UID: "node-uid"}
	case "providerID":
		m.Spec.ProviderID = ptr("openstack:///" + id)
	}
	if fip != "" {
		m.Finalizers = append(m.Finalizers, v1alpha1.KubermaticFloatingIPFinalizer)
		m.Annotations = map[string]string{v1alpha1.KubermaticFloatingIPFinalizer: fip}
	}
	return m, id, fip
}

// TestAdoptKubermaticServer: a Machine that Kubermatic's controller made finds its server by
// name (it carries Kubermatic's finalizer, or a Node) or by its providerID; the server is adopted
// (this cluster's metadata and tag, in List), Create makes no second server, and Delete removes
// the server and the floating IP Kubermatic allocated, and nothing else.
func TestAdoptKubermaticServer(t *testing.T) {
	for _, tc := range []struct{ point, pool string }{
		{"finalizer", ""}, {"nodeRef", ""}, {"providerID", ""}, {"finalizer", "public"},
	} {
		t.Run(tc.point+" "+tc.pool, func(t *testing.T) {
			sim := newSim(t, openstacktest.Options{})
			p := newProvider(t, sim, openstack.Options{})
			ctx := context.Background()
			m, id, fip := kubermaticMachine(t, sim, tc.point, tc.pool)
			inst, err := p.Get(ctx, m)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if inst.ID != id || inst.State != cloud.StateRunning || inst.ProviderID != "openstack:///"+id {
				t.Fatalf("Get = %+v, want server %s running", inst, id)
			}
			srv, _ := sim.Server(id)
			if srv.Metadata[openstack.ClusterUIDKey] != testClusterUID || srv.Metadata["team"] != "a" ||
				!slices.Contains(srv.Tags, openstack.ClusterUIDKey+"="+testClusterUID) {
				t.Fatalf("the adopted server has metadata %v and tags %v", srv.Metadata, srv.Tags)
			}
			st := newStore(m)
			again, err := p.Create(ctx, m, st.update, "")
			if err != nil || again.ID != id || len(sim.Servers()) != 1 {
				t.Fatalf("Create = %+v, %v with %d servers; want server %s and no other", again, err, len(sim.Servers()), id)
			}
			list, err := p.List(ctx, m)
			if err != nil || len(list) != 1 || list[0].ID != id {
				t.Fatalf("List = %+v, %v; want the adopted server", list, err)
			}
			bystander := created(t, p, newMachine(t, spec(sim, nil)))
			deleteAll(t, p, st)
			if _, ok := sim.Server(id); ok {
				t.Fatalf("server %s survived the deletion of its Machine", id)
			}
			if fip != "" && slices.ContainsFunc(sim.FloatingIPs(), func(f openstacktest.FloatingIP) bool { return f.ID == fip }) {
				t.Fatalf("floating IP %s survived the deletion of its Machine", fip)
			}
			if len(sim.Servers()) != 1 {
				t.Fatalf("%d servers left; the bystander's should be the only one", len(sim.Servers()))
			}
			deleteAll(t, p, bystander)
			assertEmpty(t, sim)
		})
	}
}

// TestAdoptRefusesOthers: a server is adopted only for the Machine whose UID it carries, and
// never from a slipway cluster: a Machine that merely points at a server (by name or
// providerID) gets none, the server keeps its metadata, and the Machine's Delete leaves it.
func TestAdoptRefusesOthers(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	other := newProvider(t, sim, openstack.Options{ClusterUID: "6f1d2f0e-3c1b-4a55-8e1e-0d3c9f7a5b22"})
	ctx := context.Background()
	_, kubermaticID, _ := kubermaticMachine(t, sim, "finalizer", "")
	theirs := created(t, other, newMachine(t, spec(sim, nil))).machine()
	for _, tc := range []struct {
		name string
		m    func() *v1alpha1.Machine
	}{
		{"a Kubermatic server by providerID", func() *v1alpha1.Machine {
			m := newMachine(t, spec(sim, nil))
			m.Spec.ProviderID = ptr("openstack:///" + kubermaticID)
			return m
		}},
		{"another cluster's server by name and UID", func() *v1alpha1.Machine {
			m := theirs.DeepCopy()
			m.Spec.ProviderID, m.Annotations = nil, nil
			m.Finalizers = []string{v1alpha1.MachineFinalizer, v1alpha1.KubermaticNodeFinalizer}
			return m
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := cloudIDs(sim)
			m := tc.m()
			if inst, err := p.Get(ctx, m); !errors.Is(err, cloud.ErrInstanceNotFound) {
				t.Fatalf("Get = %+v, %v; want not found", inst, err)
			}
			deleteAll(t, p, newStore(m))
			if after := cloudIDs(sim); !slices.Equal(before, after) {
				t.Fatalf("the cloud changed from %v to %v", before, after)
			}
			for _, s := range sim.Servers() {
				if s.ID == kubermaticID && s.Metadata[openstack.ClusterUIDKey] != "" {
					t.Fatalf("the Kubermatic server was marked %v for a Machine it does not name", s.Metadata)
				}
			}
		})
	}
}
