package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// wait is how long a scenario waits for one step; generous, because CI shares two cores.
const wait = 90 * time.Second

// fixture is one scenario's namespace, cloud, controller and kubelet.
type fixture struct {
	t       *testing.T
	env     *envtest.Env
	ns      string
	cloud   Cloud
	opts    controller.Options
	mo      controller.ManagerOptions
	mgr     *envtest.Manager
	kubelet *envtest.Kubelet
	ctx     context.Context
}

// setup starts a scenario. tune changes the controller options before the controller starts.
func setup(t *testing.T, env *envtest.Env, newCloud NewCloud, tune func(*controller.Options), kopts ...envtest.KubeletOption) *fixture {
	ns := env.Namespace(t)
	f := &fixture{t: t, env: env, ns: ns, cloud: newCloud(t), opts: envtest.TestOptions(ns), ctx: context.Background()}
	if tune != nil {
		tune(&f.opts)
	}
	f.kubelet = env.StartKubelet(t, ns, f.cloud, kopts...)
	f.start()
	t.Cleanup(f.cleanup)
	return f
}

func (f *fixture) start() {
	f.mgr = f.env.StartManager(f.t, f.cloud, f.opts, f.mo)
}

// restart stops the controller and starts a new one with mo, as a rollout of the
// machine-controller's Deployment would.
func (f *fixture) restart(mo controller.ManagerOptions) {
	f.mgr.Stop()
	f.mo = mo
	f.start()
}

// Leaker is a Cloud that can say what it still holds beyond servers (ports, addresses,
// volumes). Clouds that are not Leakers are judged by Len alone.
type Leaker interface {
	// Leaks describes what the cloud still holds, or "" when it holds nothing.
	Leaks() string
}

// leaks describes what the cloud still holds, or "".
func (f *fixture) leaks() string {
	if l, ok := f.cloud.(Leaker); ok {
		return l.Leaks()
	}
	if n := f.cloud.Len(); n > 0 {
		return fmt.Sprintf("%d servers", n)
	}
	return ""
}

// cleanup releases what the scenario left, through the controller, so that later scenarios see
// a clean cluster and a leak fails the scenario that caused it. A controller must run for
// that: the scenario may have stopped it, and a manager the scenario started after setup has
// already been stopped by its own t.Cleanup, which runs before this one. Whatever the
// controller does not release in time is reported, then removed by force.
func (f *fixture) cleanup() {
	f.cloud.SetUnreachable(false)
	if !f.mgr.Running() {
		f.start()
	}
	defer f.mgr.Stop()
	var mds v1alpha1.MachineDeploymentList
	_ = f.env.Client.List(f.ctx, &mds, client.InNamespace(f.ns))
	for i := range mds.Items {
		_ = f.env.Client.Delete(f.ctx, &mds.Items[i])
	}
	var sets v1alpha1.MachineSetList
	_ = f.env.Client.List(f.ctx, &sets, client.InNamespace(f.ns))
	for i := range sets.Items {
		_ = f.env.Client.Delete(f.ctx, &sets.Items[i])
	}
	_ = f.env.Client.DeleteAllOf(f.ctx, &v1alpha1.Machine{}, client.InNamespace(f.ns))
	deadline := time.Now().Add(wait)
	var left []v1alpha1.Machine
	leaks := ""
	for {
		var ms v1alpha1.MachineList
		err := f.env.Client.List(f.ctx, &ms, client.InNamespace(f.ns))
		left, leaks = ms.Items, f.leaks()
		if err == nil && len(left) == 0 && leaks == "" {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.t.Errorf("cleanup: %s after deleting everything, with a controller running, %s remain and the cloud holds %q", wait, describe(left), leaks)
	f.mgr.Stop()
	for i := range left {
		m := &left[i]
		patch := client.MergeFrom(m.DeepCopy())
		m.Finalizers = nil
		_ = f.env.Client.Patch(f.ctx, m, patch)
	}
	var nodes corev1.NodeList
	_ = f.env.Client.List(f.ctx, &nodes)
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if ns, _, ok := cut(n.Annotations[v1alpha1.NodeMachineAnnotation]); ok && ns == f.ns {
			_ = f.env.Client.Delete(f.ctx, n)
		}
	}
}

// describe names Machines with their phase and the reason of their last condition change.
func describe(ms []v1alpha1.Machine) string {
	if len(ms) == 0 {
		return "no Machines"
	}
	out := fmt.Sprintf("%d Machines:", len(ms))
	for _, m := range ms {
		out += fmt.Sprintf(" %s (phase %s, deleting %t", m.Name, m.Status.Phase, !m.DeletionTimestamp.IsZero())
		for _, c := range m.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				out += fmt.Sprintf(", %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		out += ")"
	}
	return out
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// deployment returns a MachineDeployment of replicas Machines labelled group=name.
func (f *fixture) deployment(name string, replicas int32, surge, unavailable intstr.IntOrString) *v1alpha1.MachineDeployment {
	labels := map[string]string{"group": name}
	return &v1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: &replicas,
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Strategy: &v1alpha1.MachineDeploymentStrategy{Type: v1alpha1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			Template: v1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1alpha1.MachineSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"node-role.kubernetes.io/worker": ""},
						Annotations: map[string]string{"example.com/owner": "team-a"}},
					Taints:       []corev1.Taint{{Key: "dedicated", Value: name, Effect: corev1.TaintEffectPreferNoSchedule}},
					ProviderSpec: providerSpec(f.t, f.cloud),
					Versions:     v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"},
				},
			},
		},
	}
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// machines lists the namespace's Machines.
func (f *fixture) machines() []v1alpha1.Machine {
	f.t.Helper()
	var list v1alpha1.MachineList
	if err := f.env.Client.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatalf("listing machines: %v", err)
	}
	return list.Items
}

// waitRunning waits until exactly n Machines exist, all Running, and the cloud has n servers.
func (f *fixture) waitRunning(n int) []v1alpha1.Machine {
	f.t.Helper()
	var out []v1alpha1.Machine
	envtest.Eventually(f.t, wait, fmt.Sprintf("%d running machines", n), func() (bool, string) {
		out = f.machines()
		running := 0
		for _, m := range out {
			if m.Status.Phase == v1alpha1.MachinePhaseRunning && m.DeletionTimestamp.IsZero() {
				running++
			}
		}
		return len(out) == n && running == n && f.cloud.Len() == n,
			fmt.Sprintf("%d machines, %d running, %d servers", len(out), running, f.cloud.Len())
	})
	return out
}

// scale sets the deployment's replicas through the scale subresource, as kubectl scale does.
func (f *fixture) scale(md *v1alpha1.MachineDeployment, replicas int32) {
	f.t.Helper()
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: md.Name, Namespace: md.Namespace},
		Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if err := f.env.Client.SubResource("scale").Update(f.ctx, md, client.WithSubResourceBody(scale)); err != nil {
		f.t.Fatalf("scaling %s to %d: %v", md.Name, replicas, err)
	}
}
