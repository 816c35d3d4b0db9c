package scenarios

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/machinedeployment"
	"github.com/slipway-dev/slipway/test/envtest"
)

// RolloutSurge rolls a template change out with maxSurge 1, maxUnavailable 0, then rolls again
// to check that revisionHistoryLimit removes the oldest set.
func RolloutSurge(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	rolloutBounded(f, 3, intstr.FromInt32(1), intstr.FromInt32(0), "1.37.0")
	rolloutBounded(f, 3, intstr.FromInt32(1), intstr.FromInt32(0), "1.35.5")
	var sets v1alpha1.MachineSetList
	envtest.Eventually(t, wait, "the oldest machineset removed (revisionHistoryLimit 1)", func() (bool, string) {
		if err := env.Client.List(f.ctx, &sets, client.InNamespace(f.ns)); err != nil {
			return false, err.Error()
		}
		revs := map[string]int32{}
		for _, s := range sets.Items {
			revs[s.Annotations[v1alpha1.RevisionAnnotation]] = *s.Spec.Replicas
		}
		return len(sets.Items) == 2 && revs["3"] == 3 && revs["2"] == 0, fmt.Sprintf("sets by revision: %v", revs)
	})
}

// RolloutUnavailable rolls a template change out with maxSurge 0, maxUnavailable 1.
func RolloutUnavailable(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	rolloutBounded(f, 3, intstr.FromInt32(0), intstr.FromInt32(1), "1.37.0")
}

// rolloutBounded makes sure a deployment of replicas Machines exists and is settled, changes its
// kubelet version, and checks the bounds at every observed instant until the rollout completes.
func rolloutBounded(f *fixture, replicas int32, surge, unavail intstr.IntOrString, kubelet string) *v1alpha1.MachineDeployment {
	t := f.t
	t.Helper()
	md := &v1alpha1.MachineDeployment{}
	md.Name, md.Namespace = "roll", f.ns
	if !f.env.Get(t, md) {
		md = f.deployment("roll", replicas, surge, unavail)
		f.create(md)
	}
	f.waitRunning(int(replicas))
	f.waitComplete(md)
	s, u, err := machinedeployment.ResolveSurgeUnavailable(surge, unavail, replicas)
	if err != nil {
		t.Fatal(err)
	}
	b := f.watchBounds(int(replicas+s), int(replicas-u))
	f.update(md, func() { md.Spec.Template.Spec.Versions.Kubelet = kubelet })
	f.waitComplete(md)
	events, seen := b.stop(t)
	machines := f.waitRunning(int(replicas))
	for _, m := range machines {
		if m.Spec.Versions.Kubelet != kubelet {
			t.Errorf("machine %s has kubelet %s after the rollout to %s", m.Name, m.Spec.Versions.Kubelet, kubelet)
		}
	}
	// Every old machine was replaced, one at a time: the watch saw all of them come and go.
	if seen < 2*int(replicas) || events < 4*int(replicas) {
		t.Errorf("the bounds watch saw only %d machines in %d events; it did not observe the rollout", seen, events)
	}
	t.Logf("rollout to %s: %d events checked, %d machines seen, peak %d machines", kubelet, events, seen, b.peak)
	return md
}

// waitComplete waits until the deployment reports the rollout complete for its generation.
func (f *fixture) waitComplete(md *v1alpha1.MachineDeployment) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, "rollout complete", func() (bool, string) {
		f.env.Get(f.t, md)
		s := md.Status
		c := findCond(s.Conditions, v1alpha1.MachineDeploymentProgressing)
		r := *md.Spec.Replicas
		return s.ObservedGeneration == md.Generation && c != nil && c.Reason == "NewMachineSetAvailable" &&
			s.UpdatedReplicas == r && s.Replicas == r && s.AvailableReplicas == r, fmt.Sprintf("status %+v", s)
	})
}

// update applies change to the latest version of obj, retrying on conflicts.
func (f *fixture) update(obj client.Object, change func()) {
	f.t.Helper()
	for i := 0; ; i++ {
		f.env.Get(f.t, obj)
		change()
		err := f.env.Client.Update(f.ctx, obj)
		if err == nil {
			return
		}
		if i > 20 {
			f.t.Fatalf("updating %s: %v", obj.GetName(), err)
		}
	}
}
