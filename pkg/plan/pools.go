package plan

import (
	"fmt"
	"slices"
	"strings"
)

// PoolState is a MachineDeployment as its status reports it.
type PoolState struct {
	Replicas int32 `json:"replicas"`
	Ready    int32 `json:"ready"`
	// Settled means the status describes the current spec, with every replica updated and
	// Ready and no Machine more.
	Settled bool `json:"settled,omitempty"`
}

// pools applies the MachineDeployments again when one of the manifest's is gone (deleted by
// hand: the recorded hash alone would not notice), then waits for the worker pools when this
// run applies them or the machine-controller, or when one of them is not Ready. A converged
// cluster with Ready pools gets no step, so a re-apply stays fast.
func (b *builder) pools() {
	changing := func() int {
		return slices.IndexFunc(b.plan.Steps, func(s Step) bool {
			return s.Name == StepMachineDeployment || s.Name == StepMachineController
		})
	}
	var missing, waiting []string
	for _, name := range b.d.Pools {
		p, ok := b.o.Cluster.Pools[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case !p.Settled || p.Ready < p.Replicas:
			waiting = append(waiting, fmt.Sprintf("%s (%d of %d Ready)", name, p.Ready, p.Replicas))
		}
	}
	if len(missing) > 0 && changing() < 0 && b.d.Addons["machine-deployments"] != "" {
		b.add(StepMachineDeployment, "", "no MachineDeployment for "+strings.Join(missing, ", "), false)
	}
	if len(b.d.Pools) == 0 || b.d.NoPoolWait {
		return
	}
	if i := changing(); i >= 0 {
		b.add(StepWaitPools, "", fmt.Sprintf("%s changes the worker pools: wait until their Machines are Ready Nodes", b.plan.Steps[i].Name), false)
	} else if len(waiting) > 0 {
		b.add(StepWaitPools, "", "worker pools not Ready: "+strings.Join(waiting, ", "), false)
	}
}
