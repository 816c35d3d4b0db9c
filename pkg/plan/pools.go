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

// pools waits for the worker pools when this run applies them or the machine-controller, or
// when one of them is not Ready: a converged cluster with Ready pools gets no step, so a
// re-apply stays fast.
func (b *builder) pools() {
	if len(b.d.WaitPools) == 0 {
		return
	}
	if i := slices.IndexFunc(b.plan.Steps, func(s Step) bool {
		return s.Name == StepMachineDeployment || s.Name == StepMachineController
	}); i >= 0 {
		b.add(StepWaitPools, "", fmt.Sprintf("%s changes the worker pools: wait until their Machines are Ready Nodes", b.plan.Steps[i].Name), false)
		return
	}
	var waiting []string
	for _, name := range b.d.WaitPools {
		p, ok := b.o.Cluster.Pools[name]
		switch {
		case !ok:
			waiting = append(waiting, name+" (no MachineDeployment)")
		case !p.Settled || p.Ready < p.Replicas:
			waiting = append(waiting, fmt.Sprintf("%s (%d of %d Ready)", name, p.Ready, p.Replicas))
		}
	}
	if len(waiting) > 0 {
		b.add(StepWaitPools, "", "worker pools not Ready: "+strings.Join(waiting, ", "), false)
	}
}
