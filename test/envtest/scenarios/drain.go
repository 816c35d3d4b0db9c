package scenarios

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/test/envtest"
)

// DrainBlockedByPDB deletes a Machine whose Node runs a pod protected by a PodDisruptionBudget
// that allows no disruption: the Node is cordoned and the Machine waits, with the pod untouched,
// until the budget allows the eviction. DaemonSet and mirror pods are not evicted.
func DrainBlockedByPDB(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	f.create(f.deployment("drain", 1, intstr.FromInt32(1), intstr.FromInt32(0)))
	m := f.waitRunning(1)[0]
	nodeName := m.Status.NodeRef.Name
	app := map[string]string{"app": "web"}
	web := f.runPod("web", nodeName, app, nil, false)
	agent := f.runPod("agent", nodeName, nil, f.daemonSet("agent"), false)
	static := f.runPod("static", nodeName, nil, nil, true)
	budget := f.pdb("web", app, 0)

	if err := env.Client.Delete(f.ctx, &m); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	node.Name = nodeName
	envtest.Eventually(t, wait, "node cordoned and the eviction refused", func() (bool, string) {
		env.Get(t, node)
		env.Get(t, &m)
		c := findCond(m.Status.Conditions, v1alpha1.MachineDrained)
		return node.Spec.Unschedulable && c != nil && c.Status == "False" && c.Message != "" &&
			m.Status.Phase == v1alpha1.MachinePhaseDeleting, fmt.Sprintf("unschedulable=%t drained=%+v", node.Spec.Unschedulable, c)
	})
	f.consistently(1500*time.Millisecond, "the PDB holding the drain", func() (bool, string) {
		exists := env.Get(t, &m)
		env.Get(t, web)
		_, err := f.cloud.Get(f.ctx, &m)
		return exists && web.DeletionTimestamp.IsZero() && err == nil,
			fmt.Sprintf("machine exists=%t, pod deleting=%t, server err=%v", exists, !web.DeletionTimestamp.IsZero(), err)
	})

	f.setPDB(budget, 1)
	envtest.Eventually(t, wait, "pod evicted, machine, server and node gone", func() (bool, string) {
		podLeft := env.Get(t, web)
		machineLeft := env.Get(t, &m)
		nodeLeft := env.Get(t, node)
		_, err := f.cloud.Get(f.ctx, &m)
		return !podLeft && !machineLeft && !nodeLeft && errors.Is(err, cloud.ErrInstanceNotFound),
			fmt.Sprintf("pod=%t machine=%t node=%t server err=%v", podLeft, machineLeft, nodeLeft, err)
	})
	for _, p := range []*corev1.Pod{agent, static} {
		if !env.Get(t, p) || !p.DeletionTimestamp.IsZero() {
			t.Errorf("pod %s (DaemonSet or mirror) was evicted; drains must skip it", p.Name)
		}
	}
	f.waitRunning(1) // the set replaced the machine
}
