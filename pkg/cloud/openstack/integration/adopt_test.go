package integration_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

const (
	createServer = "POST /compute/v2.1/servers"
	deleteServer = "DELETE /compute/v2.1/servers/{id}"
)

// TestAdoptKubermaticMachines: a pool that Kubermatic's machine-controller made (a
// MachineDeployment, its MachineSet under Kubermatic's template hash, two Running Machines with
// Kubermatic's finalizers, their servers marked only with machine-uid, their Ready Nodes; one
// Machine without spec.providerID, as Kubermatic leaves them, one with it) is taken over by
// slipway's controller with no server created or deleted and no new MachineSet. Then a scale-up
// creates exactly one server, and a template change rolls every Machine over within maxSurge 1,
// maxUnavailable 0, deleting the adopted servers and their Machines; scaling to 0 leaves the
// cloud empty.
func TestAdoptKubermaticMachines(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	c := newSimCloud(t, cloudOptions{latency: 5 * time.Millisecond, buildTime: 200 * time.Millisecond})
	md, servers := kubermaticPool(t, env, c, ns, 2)
	c.sim.ResetCalls()
	c.sim.ResetPeakServers()

	// The fake kubelet registers Nodes for the Machines slipway creates; the adopted ones have
	// theirs already, registered by real kubelets under Kubermatic.
	env.StartKubelet(t, ns, c.observer, envtest.NeverJoin(func(m *v1alpha1.Machine) bool {
		return slices.Contains(m.Finalizers, v1alpha1.KubermaticNodeFinalizer)
	}))
	opts := envtest.TestOptions(ns)
	opts.ClusterName = clusterName
	mgr := env.StartManager(t, c, opts, controller.ManagerOptions{})
	defer mgr.Stop()

	envtest.Eventually(t, wait, "both Machines adopted: Running, providerID recorded, servers marked", func() (bool, string) {
		if calls := c.sim.Calls(); calls.ByRoute[createServer]+calls.ByRoute[deleteServer] != 0 {
			t.Fatalf("adopting created %d and deleted %d servers", calls.ByRoute[createServer], calls.ByRoute[deleteServer])
		}
		ms := machinesIn(t, env, ns)
		adopted := 0
		for _, m := range ms {
			id := servers[m.Name]
			srv, ok := c.sim.Server(id)
			if m.Status.Phase == v1alpha1.MachinePhaseRunning && ptrString(m.Spec.ProviderID) == "openstack:///"+id &&
				ok && srv.Metadata[openstack.ClusterUIDKey] == c.clusterUID {
				adopted++
			}
		}
		return len(ms) == 2 && adopted == 2, fmt.Sprintf("%d of %d machines adopted: %s", adopted, len(ms), phases(ms))
	})
	waitComplete(t, env, md)
	if calls := c.sim.Calls(); calls.ByRoute[createServer]+calls.ByRoute[deleteServer] != 0 {
		t.Fatalf("adoption created %d and deleted %d servers", calls.ByRoute[createServer], calls.ByRoute[deleteServer])
	}
	if sets := setsIn(t, env, ns); len(sets) != 1 {
		t.Fatalf("adoption made %d MachineSets; Kubermatic's should be the only one", len(sets))
	}
	for _, m := range machinesIn(t, env, ns) {
		if !slices.Contains(m.Finalizers, v1alpha1.MachineFinalizer) {
			t.Errorf("adopted machine %s has finalizers %v, without %s", m.Name, m.Finalizers, v1alpha1.MachineFinalizer)
		}
	}

	scaleTo(t, env, md, 3)
	waitMachines(t, env, c, ns, 3, "1.36.3")
	if calls := c.sim.Calls(); calls.ByRoute[createServer] != 1 || calls.ByRoute[deleteServer] != 0 {
		t.Fatalf("scaling 2→3 created %d and deleted %d servers; want 1 and 0", calls.ByRoute[createServer], calls.ByRoute[deleteServer])
	}
	if sets := setsIn(t, env, ns); len(sets) != 1 {
		t.Fatalf("scaling up made %d MachineSets; want the adopted one only", len(sets))
	}

	before := map[string]bool{}
	for _, m := range machinesIn(t, env, ns) {
		before[m.Name] = true
	}
	c.sim.ResetPeakServers()
	update(t, env, md, func() {
		md.Spec.Template.Spec.ProviderSpec = withFlavor(t, md.Spec.Template.Spec.ProviderSpec, "m1.medium")
	})
	envtest.Eventually(t, wait, "every Machine replaced by one with the new flavor", func() (bool, string) {
		ms := machinesIn(t, env, ns)
		fresh := 0
		for _, m := range ms {
			if !before[m.Name] && m.Status.Phase == v1alpha1.MachinePhaseRunning && m.DeletionTimestamp.IsZero() {
				fresh++
			}
		}
		return len(ms) == 3 && fresh == 3 && c.Len() == 3, fmt.Sprintf("%d new running of %d machines, %d servers", fresh, len(ms), c.Len())
	})
	waitComplete(t, env, md)
	for name, id := range servers {
		if _, ok := c.sim.Server(id); ok {
			t.Errorf("the adopted server %s of machine %s outlived the rolling update", id, name)
		}
	}
	for _, s := range c.sim.Servers() {
		if s.FlavorID != "3" { // m1.medium
			t.Errorf("server %s has flavor %s after the rolling update to m1.medium", s.Name, s.FlavorID)
		}
	}
	if peak := c.sim.PeakServers(); peak > 3+1 {
		t.Errorf("the rolling update held %d servers at once; maxSurge 1 allows 4", peak)
	}

	scaleTo(t, env, md, 0)
	envtest.Eventually(t, wait, "no machines and an empty cloud", func() (bool, string) {
		ms := machinesIn(t, env, ns)
		l := c.Leaks()
		return len(ms) == 0 && l == "", fmt.Sprintf("%d machines (%s); cloud holds %q", len(ms), phases(ms), l)
	})
}

// kubermaticPool makes, with admission off (the objects predate slipway's webhook), a pool of
// n Machines as Kubermatic's machine-controller leaves it, and returns the MachineDeployment and
// the server ID of each Machine by name.
func kubermaticPool(t *testing.T, env *envtest.Env, c *simCloud, ns string, n int32) (*v1alpha1.MachineDeployment, map[string]string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"workerset": "pool1"}
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	md := &v1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pool1", Namespace: ns},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: &n, Selector: metav1.LabelSelector{MatchLabels: labels},
			Strategy: &v1alpha1.MachineDeploymentStrategy{Type: v1alpha1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			MinReadySeconds: ptrTo[int32](0), RevisionHistoryLimit: ptrTo[int32](1), ProgressDeadlineSeconds: ptrTo[int32](600),
			Template: v1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1alpha1.MachineSpec{
					ObjectMeta:   metav1.ObjectMeta{Labels: map[string]string{"workerset": "pool1"}},
					ProviderSpec: kubermaticProviderSpec(t, c),
					Versions:     v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"},
				},
			},
		},
	}
	servers := map[string]string{}
	env.WithoutAdmission(t, func() {
		create(t, env, md)
		// Kubermatic's controller labels its set, selector and Machines with a template hash
		// of its own making.
		const hash = "6b8f9c7d5"
		tmpl := md.Spec.Template.DeepCopy()
		tmpl.Labels = map[string]string{"workerset": "pool1", v1alpha1.MachineTemplateHashLabel: hash}
		ms := &v1alpha1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Name: "pool1-" + hash, Namespace: ns, Labels: tmpl.Labels,
				Annotations: map[string]string{v1alpha1.RevisionAnnotation: "1", v1alpha1.DesiredReplicasAnnotation: fmt.Sprint(n),
					v1alpha1.MaxReplicasAnnotation: fmt.Sprint(n + 1)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(md, v1alpha1.GroupVersion.WithKind("MachineDeployment"))}},
			Spec: v1alpha1.MachineSetSpec{Replicas: &n, Selector: metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: *tmpl},
		}
		create(t, env, ms)
		for i := range n {
			m := &v1alpha1.Machine{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pool1-%s-k%d", hash, i), Namespace: ns, Labels: tmpl.Labels,
					Finalizers:      []string{v1alpha1.MachineFinalizer, v1alpha1.KubermaticNodeFinalizer},
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ms, v1alpha1.GroupVersion.WithKind("MachineSet"))}},
				Spec: tmpl.Spec,
			}
			create(t, env, m)
			sctx, cancel := context.WithTimeout(ctx, wait)
			id, _, err := c.sim.CreateAsKubermatic(sctx, openstacktest.KubermaticServer{Name: m.Name, MachineUID: string(m.UID),
				Flavor: "m1.small", Image: "ubuntu-24.04", Network: "private", Metadata: map[string]string{"purpose": "envtest"}})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			servers[m.Name] = id
			if i == 1 {
				// Kubermatic's controller never sets spec.providerID; one Machine has it anyway,
				// as a Machine someone annotated by hand, so both ways to a server are taken.
				m.Spec.ProviderID = ptrTo("openstack:///" + id)
				if err := env.Client.Update(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			node := kubermaticNode(t, env, c, m, id)
			m.Status = v1alpha1.MachineStatus{
				NodeRef:   &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node.Name, UID: node.UID},
				Addresses: node.Status.Addresses[1:],
				Versions:  &v1alpha1.MachineVersionInfo{Kubelet: node.Status.NodeInfo.KubeletVersion},
			}
			if err := env.Client.Status().Update(ctx, m); err != nil {
				t.Fatalf("recording the status of machine %s: %v", m.Name, err)
			}
		}
	})
	return md, servers
}

// kubermaticNode registers the Ready Node of a Kubermatic Machine's server, as its kubelet and
// Kubermatic's controller leave it: named after the server, with its provider ID and address,
// the Machine's annotation and Kubermatic's owner label.
func kubermaticNode(t *testing.T, env *envtest.Env, c *simCloud, m *v1alpha1.Machine, serverID string) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	var ip string
	for _, p := range c.sim.Ports() {
		if p.DeviceID == serverID && len(p.FixedIPs) > 0 {
			ip = p.FixedIPs[0].IPAddress
		}
	}
	if ip == "" {
		t.Fatalf("server %s has no address", serverID)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name,
			Labels:      map[string]string{"kubernetes.io/hostname": m.Name, "machine-controller/owned-by": string(m.UID), "workerset": "pool1"},
			Annotations: map[string]string{v1alpha1.NodeMachineAnnotation: m.Namespace + "/" + m.Name}},
		Spec: corev1.NodeSpec{ProviderID: "openstack:///" + serverID},
	}
	create(t, env, node)
	node.Status = corev1.NodeStatus{
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: m.Name}, {Type: corev1.NodeInternalIP, Address: ip}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"},
	}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		t.Fatalf("reporting the status of node %s: %v", node.Name, err)
	}
	return node
}

// kubermaticProviderSpec is a providerSpec as Kubermatic's webhook stores it: every field of its
// OpenStack spec written, unset ones empty, and the region, network and subnet it defaulted
// (the last two as IDs).
func kubermaticProviderSpec(t *testing.T, c *simCloud) v1alpha1.ProviderSpec {
	t.Helper()
	var network, subnet string
	for _, n := range c.sim.Networks() {
		if n.Name == "private" {
			network = n.ID
		}
	}
	for _, s := range c.sim.Subnets() {
		if s.Name == "private-subnet" {
			subnet = s.ID
		}
	}
	cps := map[string]any{
		"identityEndpoint": "", "username": "", "password": "", "domainName": "", "tenantName": "", "tenantID": "",
		"projectName": "", "projectID": "", "tokenId": "", "region": c.sim.Region(), "instanceReadyCheckPeriod": "",
		"instanceReadyCheckTimeout": "", "computeAPIVersion": "", "image": "ubuntu-24.04", "flavor": "m1.small",
		"securityGroups": []string{"default"}, "network": network, "subnet": subnet, "floatingIpPool": "",
		"availabilityZone": "", "trustDevicePath": false, "rootDiskSizeGB": nil, "rootDiskVolumeType": "",
		"nodeVolumeAttachLimit": nil, "serverGroupID": "", "tags": map[string]string{"purpose": "envtest"},
	}
	raw, err := jsonMarshal(map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": cps,
		"operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{"distUpgradeOnBoot": false},
		"sshPublicKeys": []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"}})
	if err != nil {
		t.Fatal(err)
	}
	return v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}
}

// withFlavor returns ps with its cloudProviderSpec's flavor replaced.
func withFlavor(t *testing.T, ps v1alpha1.ProviderSpec, flavor string) v1alpha1.ProviderSpec {
	t.Helper()
	var v map[string]any
	if err := jsonUnmarshal(ps.Value.Raw, &v); err != nil {
		t.Fatal(err)
	}
	v["cloudProviderSpec"].(map[string]any)["flavor"] = flavor
	raw, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}
}

// waitComplete waits until the deployment reports its rollout complete for its generation.
func waitComplete(t *testing.T, env *envtest.Env, md *v1alpha1.MachineDeployment) {
	t.Helper()
	envtest.Eventually(t, wait, "rollout complete", func() (bool, string) {
		env.Get(t, md)
		s := md.Status
		r := *md.Spec.Replicas
		for _, c := range s.Conditions {
			if c.Type == v1alpha1.MachineDeploymentProgressing && c.Reason == "NewMachineSetAvailable" {
				return s.ObservedGeneration == md.Generation && s.UpdatedReplicas == r && s.Replicas == r &&
					s.AvailableReplicas == r, fmt.Sprintf("status %+v", s)
			}
		}
		return false, fmt.Sprintf("status %+v", s)
	})
}

// scaleTo sets the deployment's replicas through the scale subresource, as kubectl scale does.
func scaleTo(t *testing.T, env *envtest.Env, md *v1alpha1.MachineDeployment, n int32) {
	t.Helper()
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace},
		Spec: autoscalingv1.ScaleSpec{Replicas: n}}
	if err := env.Client.SubResource("scale").Update(context.Background(), md, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scaling %s to %d: %v", md.Name, n, err)
	}
}

func machinesIn(t *testing.T, env *envtest.Env, ns string) []v1alpha1.Machine {
	t.Helper()
	var list v1alpha1.MachineList
	listIn(t, env, ns, &list)
	return list.Items
}

func setsIn(t *testing.T, env *envtest.Env, ns string) []v1alpha1.MachineSet {
	t.Helper()
	var list v1alpha1.MachineSetList
	listIn(t, env, ns, &list)
	return list.Items
}

func listIn(t *testing.T, env *envtest.Env, ns string, list client.ObjectList) {
	t.Helper()
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing %T in %s: %v", list, ns, err)
	}
}

func phases(ms []v1alpha1.Machine) string {
	out := ""
	for _, m := range ms {
		out += fmt.Sprintf("%s=%s ", m.Name, m.Status.Phase)
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				out += fmt.Sprintf("(%s %s: %s) ", c.Type, c.Reason, c.Message)
			}
		}
	}
	return out
}

func create(t *testing.T, env *envtest.Env, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func ptrTo[T any](v T) *T { return &v }
