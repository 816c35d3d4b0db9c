package scenarios

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// InPlace changes a running pool's Node labels, Node annotations, taints and Machine
// annotations: no Machine or server is replaced and no MachineSet made, every Node carries the
// new labels, annotations and taints and none of those the pool no longer gives, what another
// writer put on a Node stays, and the deployment and its set say so in an UpdatedInPlace event.
// A kubelet version change afterwards still rolls.
func InPlace(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	md := f.deployment("inplace", 2, intstr.FromInt32(1), intstr.FromInt32(0))
	md.Spec.Template.Spec.Labels["env"] = "prod"
	f.create(md)
	before := f.waitRunning(2)
	f.waitComplete(md)
	uids := uidsOf(before)
	for _, m := range before {
		f.nodeMetadata(m, func(n *corev1.Node) bool {
			return n.Labels["env"] == "prod" && hasTaintValue(n, "dedicated", "inplace")
		})
		// Another writer's label and taint on the Node, which the pool never gave.
		node := &corev1.Node{}
		node.Name = m.Status.NodeRef.Name
		f.update(node, func() {
			node.Labels["example.com/rack"] = "r1"
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "example.com/maintenance", Effect: corev1.TaintEffectPreferNoSchedule})
		})
	}

	f.update(md, func() {
		spec := &md.Spec.Template.Spec
		delete(spec.Labels, "env")
		spec.Labels["tier"] = "batch"
		spec.Annotations = map[string]string{"example.com/owner": "team-b"}
		spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "moved", Effect: corev1.TaintEffectPreferNoSchedule},
			{Key: "spot", Effect: corev1.TaintEffectNoSchedule}}
		md.Spec.Template.Annotations = map[string]string{"example.com/cost-centre": "42"}
	})
	f.expectEvent(md, "UpdatedInPlace")
	for _, m := range before {
		f.nodeMetadata(m, func(n *corev1.Node) bool {
			_, env := n.Labels["env"]
			return !env && n.Labels["tier"] == "batch" && n.Labels["example.com/rack"] == "r1" &&
				n.Annotations["example.com/owner"] == "team-b" &&
				hasTaintValue(n, "dedicated", "moved") && !hasTaintValue(n, "dedicated", "inplace") &&
				hasTaintValue(n, "spot", "") && hasTaintValue(n, "example.com/maintenance", "")
		})
	}
	envtest.Eventually(t, wait, "the Machines carry the template's annotation", func() (bool, string) {
		ms := f.machines()
		for _, m := range ms {
			if m.Annotations["example.com/cost-centre"] != "42" {
				return false, fmt.Sprintf("machine %s: annotations %v", m.Name, m.Annotations)
			}
		}
		return len(ms) == 2, describe(ms)
	})
	after := f.waitRunning(2)
	f.waitComplete(md)
	if !sameUIDs(uids, after) {
		t.Fatalf("an in-place change replaced Machines: before %v, after %s", uids, describe(after))
	}
	var sets v1alpha1.MachineSetList
	if err := env.Client.List(f.ctx, &sets, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	if len(sets.Items) != 1 {
		t.Fatalf("%d MachineSets after an in-place change, want the one there was", len(sets.Items))
	}

	// What shapes the server still rolls.
	f.update(md, func() { md.Spec.Template.Spec.Versions.Kubelet = "1.37.0" })
	f.waitComplete(md)
	if rolled := f.waitRunning(2); len(uidsOf(rolled)) != 2 || !disjoint(uids, rolled) {
		t.Fatalf("a kubelet version change did not replace every Machine: before %v, after %s", uids, describe(rolled))
	}
}

// nodeMetadata waits until the Node of m satisfies ok.
func (f *fixture) nodeMetadata(m v1alpha1.Machine, ok func(*corev1.Node) bool) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, "node of "+m.Name+" carries the pool's metadata", func() (bool, string) {
		n := &corev1.Node{}
		if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n); err != nil {
			return false, err.Error()
		}
		return ok(n), fmt.Sprintf("labels %v, annotations %v, taints %v", n.Labels, n.Annotations, n.Spec.Taints)
	})
}

func hasTaintValue(n *corev1.Node, key, value string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key && t.Value == value })
}

func disjoint(uids map[types.UID]bool, ms []v1alpha1.Machine) bool {
	for _, m := range ms {
		if uids[m.UID] {
			return false
		}
	}
	return true
}
