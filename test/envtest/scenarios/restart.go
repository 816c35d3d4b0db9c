package scenarios

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// RestartMidRollout stops the controller in the middle of a rollout and starts a new one (both
// leader-elected, through the one Lease the controller's RBAC names): the rollout finishes
// within its bounds and no Machine ever gets two servers.
func RestartMidRollout(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	mo := controller.ManagerOptions{LeaderElection: true, LeaderElectionNamespace: "kube-system",
		LeaderElectionID: "machine-controller"}
	f.restart(mo)

	md := f.deployment("restart", 4, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	f.waitRunning(4)
	f.waitComplete(md)
	b := f.watchBounds(5, 4)
	f.update(md, func() { md.Spec.Template.Spec.Versions.Kubelet = "1.37.0" })
	envtest.Eventually(t, wait, "the rollout under way", func() (bool, string) {
		updated := 0
		for _, m := range f.machines() {
			if m.Spec.Versions.Kubelet == "1.37.0" && m.Spec.ProviderID != nil {
				updated++
			}
		}
		return updated >= 1, fmt.Sprintf("%d updated machines with servers", updated)
	})
	f.restart(mo)
	f.waitComplete(md)
	b.stop(t)
	machines := f.waitRunning(4)

	// No duplicates: the cloud holds exactly one server per live Machine.
	insts, err := f.cloud.List(f.ctx, &v1alpha1.Machine{Spec: md.Spec.Template.Spec})
	if err != nil {
		t.Fatal(err)
	}
	perMachine := map[string]int{}
	for _, i := range insts {
		perMachine[i.MachineUID]++
	}
	for _, m := range machines {
		if perMachine[string(m.UID)] != 1 {
			t.Errorf("machine %s has %d servers, want 1", m.Name, perMachine[string(m.UID)])
		}
	}
	if len(insts) != len(machines) {
		t.Errorf("%d servers for %d machines: %v", len(insts), len(machines), perMachine)
	}
}
