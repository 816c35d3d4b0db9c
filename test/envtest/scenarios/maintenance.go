package scenarios

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// MaintenanceAndAbort puts a Machine into maintenance (cordon and drain, no deletion) and out
// again (uncordon), then requests an abortable deletion that a PodDisruptionBudget holds up,
// aborts it (uncordon, Machine kept), requests it again and lets it finish.
func MaintenanceAndAbort(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	f.create(f.deployment("maint", 2, intstr.FromInt32(1), intstr.FromInt32(0)))
	m := f.waitRunning(2)[0]
	node := &corev1.Node{}
	node.Name = m.Status.NodeRef.Name
	annotate := func(key, value string) {
		f.update(&m, func() {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			if value == "" {
				delete(m.Annotations, key)
			} else {
				m.Annotations[key] = value
			}
		})
	}
	drained := func(want bool) func() (bool, string) {
		return func() (bool, string) {
			env.Get(t, node)
			env.Get(t, &m)
			d := condTrue(m.Status.Conditions, v1alpha1.MachineDrained)
			return node.Spec.Unschedulable == want && d == want, fmt.Sprintf("unschedulable=%t drained=%t", node.Spec.Unschedulable, d)
		}
	}

	pod := f.runPod("batch", node.Name, map[string]string{"app": "batch"}, nil, false)
	annotate(v1alpha1.MaintenanceAnnotation, "true")
	envtest.Eventually(t, wait, "node cordoned and drained for maintenance", drained(true))
	if env.Get(t, pod) {
		t.Errorf("pod %s survived the maintenance drain", pod.Name)
	}
	annotate(v1alpha1.MaintenanceAnnotation, "")
	envtest.Eventually(t, wait, "node uncordoned after maintenance", drained(false))
	if !m.DeletionTimestamp.IsZero() {
		t.Fatal("maintenance deleted the machine")
	}

	app := map[string]string{"app": "web"}
	f.runPod("web", node.Name, app, nil, false)
	budget := f.pdb("web", app, 0)
	annotate(v1alpha1.RequestDeleteAnnotation, "true")
	envtest.Eventually(t, wait, "node cordoned, drain held by the PDB", func() (bool, string) {
		env.Get(t, node)
		env.Get(t, &m)
		c := findCond(m.Status.Conditions, v1alpha1.MachineDrained)
		return node.Spec.Unschedulable && c != nil && c.Status == "False", fmt.Sprintf("unschedulable=%t drained=%v", node.Spec.Unschedulable, c)
	})
	annotate(v1alpha1.RequestDeleteAnnotation, "")
	envtest.Eventually(t, wait, "deletion aborted: node uncordoned", func() (bool, string) {
		env.Get(t, node)
		env.Get(t, &m)
		return !node.Spec.Unschedulable && findCond(m.Status.Conditions, v1alpha1.MachineDrained) == nil && m.DeletionTimestamp.IsZero(),
			fmt.Sprintf("unschedulable=%t deleting=%t", node.Spec.Unschedulable, !m.DeletionTimestamp.IsZero())
	})

	annotate(v1alpha1.RequestDeleteAnnotation, "true")
	f.setPDB(budget, 1)
	f.waitGone(&m)
	f.waitRunning(2)
}
