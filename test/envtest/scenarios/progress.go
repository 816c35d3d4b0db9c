package scenarios

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// PauseMinReadyDeadline checks three deployment settings: minReadySeconds delays availability;
// a paused deployment does not roll out a template change until resumed; and a rollout that
// stops making progress (its new Nodes never join) turns Progressing False with reason
// ProgressDeadlineExceeded after progressDeadlineSeconds.
func PauseMinReadyDeadline(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil, envtest.NeverJoin(func(m *v1alpha1.Machine) bool {
		return m.Spec.Versions.Kubelet == "1.35.5" // the stalled rollout's template
	}))
	md := f.deployment("knobs", 2, intstr.FromInt32(1), intstr.FromInt32(0))
	md.Spec.MinReadySeconds = ptr(int32(3))
	md.Spec.ProgressDeadlineSeconds = ptr(int32(4))
	f.create(md)
	ms := f.waitRunning(2)
	readySince := time.Now()
	for _, m := range ms {
		if c := findCond(m.Status.Conditions, v1alpha1.MachineNodeReady); c != nil && c.LastTransitionTime.Time.Before(readySince) {
			readySince = c.LastTransitionTime.Time
		}
	}
	envtest.Eventually(t, wait, "machines available after minReadySeconds", func() (bool, string) {
		env.Get(t, md)
		return md.Status.AvailableReplicas == 2, fmt.Sprintf("%d available", md.Status.AvailableReplicas)
	})
	// Condition times have a resolution of one second.
	if waited := time.Since(readySince); waited < 2*time.Second {
		t.Errorf("machines counted available %s after their Nodes were Ready, before minReadySeconds 3", waited)
	}

	f.update(md, func() { md.Spec.Paused = true; md.Spec.Template.Spec.Versions.Kubelet = "1.37.0" })
	f.consistently(1500*time.Millisecond, "a paused deployment not rolling out", func() (bool, string) {
		var sets v1alpha1.MachineSetList
		_ = env.Client.List(f.ctx, &sets, client.InNamespace(f.ns))
		return len(sets.Items) == 1, fmt.Sprintf("%d machinesets", len(sets.Items))
	})
	env.Get(t, md)
	if c := findCond(md.Status.Conditions, v1alpha1.MachineDeploymentProgressing); c == nil || c.Reason != "DeploymentPaused" {
		t.Errorf("Progressing = %+v, want reason DeploymentPaused", c)
	}
	f.update(md, func() { md.Spec.Paused = false })
	f.waitComplete(md)

	f.update(md, func() { md.Spec.Template.Spec.Versions.Kubelet = "1.35.5" })
	envtest.Eventually(t, wait, "Progressing=False with ProgressDeadlineExceeded", func() (bool, string) {
		env.Get(t, md)
		c := findCond(md.Status.Conditions, v1alpha1.MachineDeploymentProgressing)
		return c != nil && c.Status == "False" && c.Reason == "ProgressDeadlineExceeded", fmt.Sprintf("%+v", c)
	})
	f.expectEvent(md, "ProgressDeadlineExceeded")
	env.Get(t, md)
	if md.Status.AvailableReplicas < 2 {
		t.Errorf("the stalled rollout left %d available, want the 2 old machines kept", md.Status.AvailableReplicas)
	}
}
