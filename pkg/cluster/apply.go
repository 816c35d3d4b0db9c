package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/steps"
)

// ApplyOptions are apply's flags.
type ApplyOptions struct {
	DryRun      bool
	AutoApprove bool
	// Confirm asks the user; nil means stdin is not a terminal, so apply refuses without
	// AutoApprove.
	Confirm func(question string) (bool, error)
	// JSON prints the plan as JSON instead of text.
	JSON     bool
	Parallel int
	// UpgradeMachineDeployments bumps the kubelet version of existing MachineDeployments.
	UpgradeMachineDeployments bool
	// KillAt is the interruption test hook (see steps.Executor.KillAt).
	KillAt string
	// Out receives the plan; Log receives progress (they differ when the plan is JSON).
	Out io.Writer
	Log io.Writer
}

// ErrNotConfirmed is returned when the user declines the plan.
var ErrNotConfirmed = errors.New("apply cancelled: the plan was not confirmed")

// Apply converges the cluster: probe, plan, confirm, lock, execute, save the kubeconfig.
func Apply(ctx context.Context, env *steps.Env, opts ApplyOptions) error {
	if opts.Log == nil {
		opts.Log = opts.Out
	}
	fmt.Fprintf(opts.Log, "Probing %d hosts...\n", len(env.Nodes))
	observed, err := Probe(ctx, env)
	if err != nil {
		return err
	}
	desired, err := Desire(ctx, env, observed, opts.UpgradeMachineDeployments)
	if err != nil {
		return err
	}
	p, err := plan.Build(desired.Plan, *observed)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := printJSON(opts.Out, p); err != nil {
			return err
		}
	} else {
		plan.Print(opts.Out, env.Cluster.Name, desired.Plan.Version, p)
	}
	if opts.DryRun {
		return nil
	}
	if !p.Empty() {
		if err := confirm(opts); err != nil {
			return err
		}
		unlock, err := Lock(ctx, env, opts.Log)
		if err != nil {
			return err
		}
		defer unlock()
		x := &steps.Executor{Steps: Implementations(env, desired), Parallel: opts.Parallel, Out: opts.Log, KillAt: opts.KillAt}
		if err := x.Run(ctx, p); err != nil {
			return err
		}
	}
	return saveKubeconfig(ctx, env, opts.Log)
}

func confirm(opts ApplyOptions) error {
	if opts.AutoApprove {
		return nil
	}
	if opts.Confirm == nil {
		return errors.New("refusing to change the cluster without confirmation: stdin is not a terminal; review the plan (--dry-run) and pass --auto-approve")
	}
	ok, err := opts.Confirm("Apply this plan?")
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotConfirmed
	}
	return nil
}

func saveKubeconfig(ctx context.Context, env *steps.Env, out io.Writer) error {
	data, err := FetchKubeconfig(ctx, env)
	if err != nil {
		return err
	}
	path := KubeconfigPath(env.Cluster.Name)
	changed, err := WriteKubeconfig(path, data)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(out, "Kubeconfig written to %s (mode 0600). Try: kubectl --kubeconfig %s get nodes\n", path, path)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
