package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// QuotaWait runs a pool into the cloud's instances quota. The Machines the cloud refuses wait,
// saying why (InstanceReady False, InsufficientResources, in the cloud's words, and a warning
// event), for longer than the join timeout, and are neither failed nor replaced; once the quota
// is raised the same Machines get their servers and join. A rollout that the quota holds back
// keeps every old Machine until the new one can run.
func QuotaWait(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	// Once quota frees, a Machine's Node must join within the join timeout, or the Machine is
	// rightly replaced: 3 s was too little on a loaded CI machine (one CI run replaced a Machine
	// there). Each wait below outlasts the timeout by a margin, which is what it shows.
	const joinTimeout = 10 * time.Second
	const outlast = joinTimeout + 3*time.Second
	f := setup(t, env, newCloud, func(o *controller.Options) {
		o.JoinTimeout = joinTimeout
		o.CapacityRetryMax = 400 * time.Millisecond
	})
	f.cloud.SetInstanceQuota(1)
	md := f.deployment("quota", 3, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)

	var waiting []v1alpha1.Machine
	envtest.Eventually(t, wait, "one machine running and two waiting for quota", func() (bool, string) {
		ms := f.machines()
		running := 0
		waiting = waiting[:0]
		for _, m := range ms {
			switch {
			case m.Status.Phase == v1alpha1.MachinePhaseRunning:
				running++
			case waitsForQuota(m):
				waiting = append(waiting, m)
			}
		}
		return len(ms) == 3 && running == 1 && len(waiting) == 2, describe(ms)
	})
	for _, m := range waiting {
		c := findCond(m.Status.Conditions, v1alpha1.MachineInstanceReady)
		if !strings.Contains(c.Message, "Quota exceeded for instances") {
			t.Errorf("machine %s: InstanceReady says %q; want the cloud's words, which name the quota", m.Name, c.Message)
		}
		if h := findCond(m.Status.Conditions, v1alpha1.MachineHealthy); h == nil || h.Status != metav1.ConditionUnknown {
			t.Errorf("machine %s waits for quota with Healthy %+v; want Unknown, which nothing replaces", m.Name, h)
		}
	}
	f.expectEvent(&waiting[0], string(v1alpha1.InsufficientResourcesMachineError))

	// Past the join timeout nothing was failed, replaced or deleted.
	uids := uidsOf(f.machines())
	f.consistently(outlast, "the pool waits for quota, every Machine kept", func() (bool, string) {
		ms := f.machines()
		for _, m := range ms {
			if m.Status.ErrorReason != nil || !m.DeletionTimestamp.IsZero() {
				return false, fmt.Sprintf("machine %s failed or is being deleted: %s", m.Name, describe(ms))
			}
		}
		return sameUIDs(uids, ms) && f.cloud.Len() == 1, describe(ms)
	})

	f.cloud.SetInstanceQuota(0)
	ms := f.waitRunning(3)
	if !sameUIDs(uids, ms) {
		t.Errorf("once quota freed, the pool is %s; want the same three Machines; events: %s", describe(ms), f.eventSummary())
	}
	f.expectEvent(&waiting[0], "CapacityFreed")
	f.waitComplete(md)

	// A rollout with no room for its surge machine: the new Machine waits and no old one goes.
	f.cloud.SetInstanceQuota(3)
	f.update(md, func() { md.Spec.Template.Spec.Versions.Kubelet = "1.37.0" })
	envtest.Eventually(t, wait, "the rollout's new machine waiting for quota", func() (bool, string) {
		ms := f.machines()
		for _, m := range ms {
			if m.Spec.Versions.Kubelet == "1.37.0" && waitsForQuota(m) {
				return true, ""
			}
		}
		return false, describe(ms)
	})
	f.consistently(outlast, "the old Machines kept while the new one waits", func() (bool, string) {
		ms := f.machines()
		for _, m := range ms {
			if _, old := uids[m.UID]; old && !m.DeletionTimestamp.IsZero() {
				return false, fmt.Sprintf("old machine %s is being deleted: %s", m.Name, describe(ms))
			}
		}
		return len(ms) == 4, describe(ms)
	})
	f.cloud.SetInstanceQuota(0)
	f.waitComplete(md)
	for _, m := range f.waitRunning(3) {
		if m.Spec.Versions.Kubelet != "1.37.0" {
			t.Errorf("machine %s has kubelet %s after the rollout", m.Name, m.Spec.Versions.Kubelet)
		}
	}
}

// waitsForQuota reports whether the Machine waits for the cloud's quota or capacity.
func waitsForQuota(m v1alpha1.Machine) bool {
	c := findCond(m.Status.Conditions, v1alpha1.MachineInstanceReady)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == string(v1alpha1.InsufficientResourcesMachineError) &&
		m.Status.ErrorReason == nil
}

func uidsOf(ms []v1alpha1.Machine) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, m := range ms {
		out[m.UID] = true
	}
	return out
}

// sameUIDs reports whether ms are exactly the Machines of uids.
func sameUIDs(uids map[types.UID]bool, ms []v1alpha1.Machine) bool {
	if len(ms) != len(uids) {
		return false
	}
	for _, m := range ms {
		if !uids[m.UID] {
			return false
		}
	}
	return true
}
