package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// wait bounds each step; generous, because CI shares two cores.
const wait = 2 * time.Minute

// TestScaleRolloutScaleToZero drives one MachineDeployment through the real controllers on a
// real kube-apiserver while the simulated cloud fails 5% of the controller's API calls with
// HTTP 500 and answers each after 20 ms: 0→5 machines, a rolling update with maxSurge 1 and
// maxUnavailable 0, then 0 machines. The cloud must never hold more than replicas+maxSurge
// servers, and must end with no server, port, floating IP or volume.
func TestScaleRolloutScaleToZero(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	c := newSimCloud(t, cloudOptions{errorRate: 0.05, latency: 20 * time.Millisecond, buildTime: 300 * time.Millisecond})
	env.StartKubelet(t, ns, c.observer)
	opts := envtest.TestOptions(ns)
	opts.ClusterName = clusterName
	mgr := env.StartManager(t, c, opts, controller.ManagerOptions{})
	defer mgr.Stop()
	ctx := context.Background()
	const replicas, surge = 5, 1

	md := deployment(t, ns, c, 0, surge)
	if err := env.Client.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	setReplicas(t, env, md, replicas)
	waitMachines(t, env, c, ns, replicas, "1.36.3")
	up := c.sim.Calls()
	t.Logf("scale 0→%d: %d cloud API calls (%.1f per machine), %d failed", replicas, up.Total, float64(up.Total)/replicas, up.Errors)

	update(t, env, md, func() { md.Spec.Template.Spec.Versions.Kubelet = "1.37.0" })
	waitMachines(t, env, c, ns, replicas, "1.37.0")
	t.Logf("after the rollout: peak %d servers", c.sim.PeakServers())

	setReplicas(t, env, md, 0)
	envtest.Eventually(t, wait, "no machines and an empty cloud", func() (bool, string) {
		var ms v1alpha1.MachineList
		if err := env.Client.List(ctx, &ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		l := c.Leaks()
		return len(ms.Items) == 0 && l == "", fmt.Sprintf("%d machines; cloud holds %q", len(ms.Items), l)
	})
	if peak := c.sim.PeakServers(); peak > replicas+surge {
		t.Fatalf("the cloud held %d servers at once; maxSurge allows %d", peak, replicas+surge)
	} else if peak < replicas+surge {
		t.Fatalf("peak of %d servers: the rollout never surged, so the bound was not exercised", peak)
	}
	all := c.sim.Calls()
	t.Logf("whole run: %d cloud API calls, %d failed by injection or otherwise", all.Total, all.Errors)
	if all.Errors == 0 {
		t.Fatal("no call failed: the fault injection did not reach the controller")
	}
}

// waitMachines waits until exactly n Machines run the kubelet version, and the cloud holds
// exactly n servers.
func waitMachines(t *testing.T, env *envtest.Env, c *simCloud, ns string, n int, kubelet string) {
	t.Helper()
	envtest.Eventually(t, wait, fmt.Sprintf("%d running machines with kubelet %s", n, kubelet), func() (bool, string) {
		var ms v1alpha1.MachineList
		if err := env.Client.List(context.Background(), &ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		ok := 0
		for _, m := range ms.Items {
			if m.Status.Phase == v1alpha1.MachinePhaseRunning && m.Spec.Versions.Kubelet == kubelet && m.DeletionTimestamp.IsZero() {
				ok++
			}
		}
		servers := len(c.sim.Servers())
		return len(ms.Items) == n && ok == n && servers == n, fmt.Sprintf("%d machines, %d ready at %s, %d servers", len(ms.Items), ok, kubelet, servers)
	})
}

func deployment(t testing.TB, ns string, c *simCloud, replicas, surge int32) *v1alpha1.MachineDeployment {
	t.Helper()
	raw, err := jsonMarshal(map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": c.spec,
		"operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	md := envtest.MachineDeployment(ns, "workers", map[string]string{"group": "workers"}, replicas, surge, raw)
	md.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "workers", Effect: corev1.TaintEffectPreferNoSchedule}}
	return md
}

func setReplicas(t testing.TB, env *envtest.Env, md *v1alpha1.MachineDeployment, n int32) {
	t.Helper()
	update(t, env, md, func() { md.Spec.Replicas = &n })
}

// update applies change to the latest md, retrying on conflicts.
func update(t testing.TB, env *envtest.Env, md *v1alpha1.MachineDeployment, change func()) {
	t.Helper()
	for i := 0; ; i++ {
		env.Get(t, md)
		change()
		err := env.Client.Update(context.Background(), md)
		if err == nil {
			return
		}
		if i > 20 {
			t.Fatalf("updating %s: %v", md.Name, err)
		}
	}
}

// TestErrorServerReplacedInPlace: a server that goes to ERROR is replaced by the provider under
// the same Machine (with the Nova fault in the Machine's condition meanwhile), rather than the
// Machine being failed or replaced.
func TestErrorServerReplacedInPlace(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	c := newSimCloud(t, cloudOptions{latency: 5 * time.Millisecond, buildTime: 200 * time.Millisecond})
	env.StartKubelet(t, ns, c.observer)
	opts := envtest.TestOptions(ns)
	opts.ClusterName = clusterName
	mgr := env.StartManager(t, c, opts, controller.ManagerOptions{})
	defer mgr.Stop()
	ctx := context.Background()
	const fault = "No valid host was found. There are not enough hosts available."
	c.sim.FailNextServers(1, fault)
	md := deployment(t, ns, c, 1, 1)
	if err := env.Client.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	var first v1alpha1.Machine
	envtest.Eventually(t, wait, "the first machine", func() (bool, string) {
		var ms v1alpha1.MachineList
		if err := env.Client.List(ctx, &ms, client.InNamespace(ns)); err != nil || len(ms.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		first = ms.Items[0]
		return true, ""
	})
	waitMachines(t, env, c, ns, 1, "1.36.3")
	var ms v1alpha1.MachineList
	if err := env.Client.List(ctx, &ms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	m := ms.Items[0]
	if m.UID != first.UID {
		t.Fatalf("machine %s was replaced by %s; its ERROR server should have been replaced under it", first.Name, m.Name)
	}
	srv := c.sim.Servers()[0]
	if got := ptrString(m.Spec.ProviderID); got != "openstack:///"+srv.ID {
		t.Errorf("machine providerID %q does not name its replacement server %s", got, srv.ID)
	}
	setReplicas(t, env, md, 0)
	envtest.Eventually(t, wait, "an empty cloud", func() (bool, string) { l := c.Leaks(); return l == "", l })
}

func ptrString(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
