package scenarios

import (
	"fmt"
	"hash/fnv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/machinedeployment"
	"github.com/slipway-dev/slipway/test/envtest"
)

// ScaleFromZero: a pool with the cluster-autoscaler's bounds and no Machine carries the capacity
// annotations from which the autoscaler builds the Node it would get (the flavor's vCPUs, RAM and
// disk as the cloud defines the flavor, the kubelet's pods, the template's Node labels and taints),
// in the forms the autoscaler parses. Scaled through the scale subresource as the autoscaler
// does, it grows to one Running Machine whose Node carries those labels, then to three, each Node
// naming its Machine with the same provider ID; scaled to two, the Machine annotated
// cluster.k8s.io/delete-machine is the one that goes; then back to none. The annotations follow a
// change of the template's labels. A pool without bounds gets no annotation.
func ScaleFromZero(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	md := f.deployment("zero", 0, intstr.FromInt32(1), intstr.FromInt32(0))
	md.Annotations = map[string]string{v1alpha1.AutoscalerMinSizeAnnotation: "0", v1alpha1.AutoscalerMaxSizeAnnotation: "3"}
	f.create(md)
	plain := f.deployment("plain", 0, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(plain)
	res := f.cloud.FlavorResources()
	want := map[string]string{
		machinedeployment.CapacityCPUAnnotation:     fmt.Sprint(res.CPU),
		machinedeployment.CapacityMemoryAnnotation:  fmt.Sprintf("%dMi", res.MemoryMiB),
		machinedeployment.CapacityDiskAnnotation:    fmt.Sprintf("%dGi", res.DiskGiB),
		machinedeployment.CapacityMaxPodsAnnotation: "110",
		machinedeployment.CapacityLabelsAnnotation:  "node-role.kubernetes.io/worker=",
		machinedeployment.CapacityTaintsAnnotation:  "dedicated=zero:PreferNoSchedule",
	}
	f.waitCapacity(md, want)
	// Parsed as the autoscaler parses them: resource quantities.
	a := md.Annotations
	if cpu := resource.MustParse(a[machinedeployment.CapacityCPUAnnotation]); cpu.Value() != int64(res.CPU) {
		t.Errorf("cpu %s parses to %d, want %d", a[machinedeployment.CapacityCPUAnnotation], cpu.Value(), res.CPU)
	}
	if mem := resource.MustParse(a[machinedeployment.CapacityMemoryAnnotation]); mem.Value() != int64(res.MemoryMiB)<<20 {
		t.Errorf("memory %s parses to %d bytes, want %d", a[machinedeployment.CapacityMemoryAnnotation], mem.Value(), int64(res.MemoryMiB)<<20)
	}

	f.scale(md, 1)
	ms := f.waitRunning(1)
	f.nodeMetadata(ms[0], func(n *corev1.Node) bool {
		_, worker := n.Labels["node-role.kubernetes.io/worker"]
		return worker && hasTaintValue(n, "dedicated", "zero")
	})
	// The rest of what the autoscaler reads: each Node names its Machine, and their provider IDs
	// are the same, so it maps a Node to its node group; it picks the Machine that goes when it
	// scales down by annotating it cluster.k8s.io/delete-machine.
	f.scale(md, 3)
	ms = f.waitRunning(3)
	for _, m := range ms {
		f.nodeMetadata(m, func(n *corev1.Node) bool {
			return n.Annotations[v1alpha1.NodeMachineAnnotation] == m.Namespace+"/"+m.Name &&
				m.Spec.ProviderID != nil && n.Spec.ProviderID == *m.Spec.ProviderID
		})
	}
	// The victim is the Ready Machine that the default (random) policy would keep: the highest
	// in its order, a hash of the UID. So the test fails if the annotation is ignored.
	f.waitNodeReady(3)
	ms = f.machines()
	victim := ms[0]
	for _, m := range ms[1:] {
		if uidRank(m.UID) > uidRank(victim.UID) {
			victim = m
		}
	}
	f.update(&victim, func() {
		if victim.Annotations == nil {
			victim.Annotations = map[string]string{}
		}
		victim.Annotations[v1alpha1.DeleteMachineAnnotation] = "2026-12-04 21:00:00 +0000 UTC"
	})
	f.scale(md, 2)
	for _, m := range f.waitRunning(2) {
		if m.UID == victim.UID {
			t.Fatalf("scaled from 3 to 2, the Machine annotated %s (%s) stayed", v1alpha1.DeleteMachineAnnotation, victim.Name)
		}
	}
	f.scale(md, 0)
	f.waitRunning(0)

	f.update(md, func() { md.Spec.Template.Spec.Labels["tier"] = "batch" })
	want[machinedeployment.CapacityLabelsAnnotation] = "node-role.kubernetes.io/worker=,tier=batch"
	f.waitCapacity(md, want)
	if !env.Get(t, plain) {
		t.Fatal("the pool without bounds is gone")
	}
	for k := range want {
		if v, ok := plain.Annotations[k]; ok {
			t.Errorf("the pool without autoscaler bounds got %s=%q", k, v)
		}
	}
}

// waitCapacity waits until md carries every annotation of want.
func (f *fixture) waitCapacity(md *v1alpha1.MachineDeployment, want map[string]string) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, "the capacity annotations of "+md.Name, func() (bool, string) {
		if err := f.env.Client.Get(f.ctx, client.ObjectKeyFromObject(md), md); err != nil {
			return false, err.Error()
		}
		for k, v := range want {
			if md.Annotations[k] != v {
				return false, fmt.Sprintf("annotations %v", md.Annotations)
			}
		}
		return true, ""
	})
}

// uidRank is the machine-controller's random deletion order: lower goes first.
func uidRank(uid types.UID) uint32 {
	h := fnv.New32a()
	h.Write([]byte(uid))
	return h.Sum32()
}

// waitNodeReady waits until n Machines exist, each with a Ready Node.
func (f *fixture) waitNodeReady(n int) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, fmt.Sprintf("%d machines with a Ready Node", n), func() (bool, string) {
		ms := f.machines()
		ready := 0
		for _, m := range ms {
			if c := findCond(m.Status.Conditions, v1alpha1.MachineNodeReady); c != nil && c.Status == metav1.ConditionTrue {
				ready++
			}
		}
		return len(ms) == n && ready == n, describe(ms)
	})
}
