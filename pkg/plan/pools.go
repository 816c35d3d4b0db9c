package plan

import (
	"encoding/json"
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
	// Object is the live MachineDeployment as JSON, which the plan compares with the manifest's.
	Object json.RawMessage `json:"-"`
}

// pools applies the MachineDeployments again when one of the manifest's is gone (deleted by
// hand: the recorded hash alone would not notice) or differs from the manifest (drift: a hand
// scale or edit), and says per pool what differs and what apply does about it; then it waits for
// the worker pools when this run applies them or the machine-controller, or when one of them is
// not Ready. A converged cluster with Ready pools gets no step, so a re-apply stays fast.
func (b *builder) pools() error {
	changes, err := poolChanges(b.d, b.o)
	if err != nil {
		return err
	}
	b.plan.Pools = changes
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
	var drift []string
	for _, c := range changes {
		if c.Action != PoolKept {
			drift = append(drift, c.String())
		}
	}
	switch i := slices.IndexFunc(b.plan.Steps, func(s Step) bool { return s.Name == StepMachineDeployment }); {
	case i >= 0 && len(drift) > 0:
		b.plan.Steps[i].Reason += ": " + strings.Join(drift, "; ")
	case b.d.Addons["machine-deployments"] == "":
	case len(drift) > 0:
		b.add(StepMachineDeployment, "", "the live MachineDeployments differ from the manifest: "+strings.Join(drift, "; "), false)
	case len(missing) > 0 && changing() < 0:
		b.add(StepMachineDeployment, "", "no MachineDeployment for "+strings.Join(missing, ", "), false)
	}
	if len(b.d.Pools) == 0 || b.d.NoPoolWait {
		return nil
	}
	if i := changing(); i >= 0 {
		b.add(StepWaitPools, "", fmt.Sprintf("%s changes the worker pools: wait until their Machines are Ready Nodes", b.plan.Steps[i].Name), false)
	} else if len(waiting) > 0 {
		b.add(StepWaitPools, "", "worker pools not Ready: "+strings.Join(waiting, ", "), false)
	}
	return nil
}
