package integration_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/envtest"
)

// foreign is a server of another cluster in the same project, with its port, floating IP and
// boot volume: what the attacker wants the controller to delete.
type foreign struct {
	server, port, fip, volume string
}

// foreignServer makes a server for a Machine of another cluster that shares the project and
// even the cluster's name; only its cluster UID differs.
func (a *attack) foreignServer() foreign {
	a.t.Helper()
	other := a.cloud.with(a.t, func(o *openstack.Options) { o.ClusterUID = string(uuid.NewUUID()) })
	m := a.machine("victim", nil)
	m.UID = uuid.NewUUID()
	noop := func(_ context.Context, mutate func(*v1alpha1.Machine)) error { mutate(m); return nil }
	inst, err := other.Create(a.ctx, m, noop, "")
	if err != nil {
		a.t.Fatal(err)
	}
	f := foreign{server: inst.ID}
	for _, p := range a.cloud.sim.Ports() {
		if p.DeviceID == inst.ID || strings.Contains(p.Description, string(m.UID)) {
			f.port = p.ID
		}
	}
	for _, fip := range a.cloud.sim.FloatingIPs() {
		if strings.Contains(fip.Description, string(m.UID)) {
			f.fip = fip.ID
		}
	}
	for _, v := range a.cloud.sim.Volumes() {
		if v.ServerID == inst.ID {
			f.volume = v.ID
		}
	}
	if f.port == "" || f.fip == "" || f.volume == "" {
		a.t.Fatalf("the other cluster's server lacks a port, floating IP or volume: %+v", f)
	}
	return f
}

// survives fails unless the foreign resources all still exist, the server attached to its own
// port.
func (a *attack) survives(f foreign) {
	a.t.Helper()
	sim := a.cloud.sim
	ok := slices.ContainsFunc(sim.Servers(), func(s openstacktest.Server) bool { return s.ID == f.server && s.TaskState == "" }) &&
		slices.ContainsFunc(sim.Ports(), func(p openstacktest.Port) bool { return p.ID == f.port && p.DeviceID == f.server }) &&
		slices.ContainsFunc(sim.FloatingIPs(), func(x openstacktest.FloatingIP) bool { return x.ID == f.fip && x.PortID == f.port }) &&
		slices.ContainsFunc(sim.Volumes(), func(v openstacktest.Volume) bool { return v.ID == f.volume })
	if !ok {
		a.t.Fatalf("the other cluster's server, port, floating IP or volume was touched: %+v; cloud holds %s", f, a.cloud.Leaks())
	}
}

// TestAttackForgedProviderState: a Machine whose provider-state annotation names another
// cluster's server, port, floating IP and volume, so that deleting the Machine deletes them.
// Admission refuses the annotation from anyone but the controller, on create and on update.
// With admission out of the way, the controller gives the Machine a server of its own (never
// the named port or floating IP), deletes only that, and the other cluster's resources survive.
func TestAttackForgedProviderState(t *testing.T) {
	a := newAttack(t, nil)
	f := a.foreignServer()
	state, _ := json.Marshal(map[string]any{"serverID": f.server, "portID": f.port, "floatingIPs": []string{f.fip},
		"volumeIDs": []string{f.volume}})
	forge := func(m *v1alpha1.Machine) { m.Annotations = map[string]string{openstack.StateAnnotation: string(state)} }
	field := "metadata.annotations[" + openstack.StateAnnotation + "]"

	m := a.machine("forged", nil)
	forge(m)
	a.refused(a.mallory.Create(a.ctx, m), field, "written only by the machine-controller")
	honest := a.machine("honest", nil)
	if err := a.mallory.Create(a.ctx, honest); err != nil {
		t.Fatal(err)
	}
	waitRunningMachine(a, honest)
	forge(honest)
	a.refused(a.mallory.Update(a.ctx, honest), field, "written only by the machine-controller")
	a.deleted(honest)

	m = a.machine("forged", nil)
	forge(m)
	a.bypass(m)
	waitRunningMachine(a, m)
	a.survives(f)
	a.deleted(m)
	a.survives(f)
	if n := len(a.cloud.sim.Servers()); n != 1 {
		t.Fatalf("the cloud holds %d servers; want only the other cluster's", n)
	}
}

// TestAttackForgedProviderID: a Machine whose spec.providerID names the server of a Node that
// is not its own (here another cluster's, with a Ready Node running a pod), so that deleting the
// Machine drains and deletes that Node. Admission refuses spec.providerID from anyone but the
// controller, on create and update, and in templates. With admission out of the way, the
// controller finds no server of the Machine's behind the providerID, and deleting the Machine
// neither cordons nor drains nor deletes the Node, nor labels it.
func TestAttackForgedProviderID(t *testing.T) {
	a := newAttack(t, nil)
	f := a.foreignServer()
	providerID := "openstack:///" + f.server
	fn := a.foreignNode(providerID)

	m := a.machine("forged", nil)
	m.Spec.ProviderID = &providerID
	a.refused(a.mallory.Create(a.ctx, m), "spec.providerID", "written only by the machine-controller")
	md := deployment(t, a.ns, a.cloud, 1, 1)
	md.Spec.Template.Spec.ProviderID = &providerID
	a.refused(a.mallory.Create(a.ctx, md), "spec.template.spec.providerID", "a template may not carry it")

	m = a.machine("forged", nil)
	m.Spec.ProviderID = &providerID
	a.bypass(m)
	waitCondition(a, m, v1alpha1.MachineInstanceReady, "the server disappeared from the cloud")
	a.deleted(m)

	a.untouched(fn)
	a.survives(f)
}

// foreignNodeOf is a Ready Node that is none of the attack's Machines', with a pod on it: a
// control plane, as the attacker would like the controller to drain and delete.
type foreignNodeOf struct {
	node, before *corev1.Node
	pod          *corev1.Pod
}

// foreignNode makes a control plane Node with providerID (none when empty) and addresses, and
// a pod on it.
func (a *attack) foreignNode(providerID string, addresses ...corev1.NodeAddress) foreignNodeOf {
	a.t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "control-plane-" + a.ns}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := a.env.Client.Create(a.ctx, node); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { _ = a.env.Client.Delete(context.Background(), node) })
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	node.Status.Addresses = addresses
	if err := a.env.Client.Status().Update(a.ctx, node); err != nil {
		a.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "etcd-like"},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "registry.example/c"}}}}
	if err := a.env.Client.Create(a.ctx, pod); err != nil {
		a.t.Fatal(err)
	}
	return foreignNodeOf{node: node, before: node.DeepCopy(), pod: pod}
}

// untouched fails unless the foreign Node still exists, unchanged (not cordoned, claimed,
// labelled or tainted), and its pod was not evicted.
func (a *attack) untouched(f foreignNodeOf) {
	a.t.Helper()
	node, before, pod := f.node, f.before, f.pod
	if !a.env.Get(a.t, node) {
		a.t.Fatal("the foreign Node was deleted")
	}
	if !equality.Semantic.DeepEqual(before.Spec, node.Spec) || !equality.Semantic.DeepEqual(before.Labels, node.Labels) ||
		!equality.Semantic.DeepEqual(before.Annotations, node.Annotations) {
		a.t.Fatalf("the foreign Node was changed (cordoned, claimed, labelled or tainted):\nbefore %+v %v %v\nafter  %+v %v %v",
			before.Spec, before.Labels, before.Annotations, node.Spec, node.Labels, node.Annotations)
	}
	if !a.env.Get(a.t, pod) || !pod.DeletionTimestamp.IsZero() {
		a.t.Fatal("the foreign Node's pod was evicted")
	}
}

// waitRunningMachine waits until m's server runs and its Node is Ready.
func waitRunningMachine(a *attack, m *v1alpha1.Machine) {
	a.t.Helper()
	envtest.Eventually(a.t, wait, "machine "+m.Name+" running", func() (bool, string) {
		if !a.env.Get(a.t, m) {
			return false, "gone"
		}
		return m.Status.Phase == v1alpha1.MachinePhaseRunning, string(m.Status.Phase)
	})
}
