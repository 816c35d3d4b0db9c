package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/steps"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// Desired is the cluster as the manifest wants it: what planning compares, plus the rendered
// manifests the addon steps apply.
type Desired struct {
	Plan               plan.Desired
	CNI                []byte
	MachineDeployments []byte
}

// Desire renders what the manifest asks for. It talks to the cluster only to find pending
// certificate requests of the manifest's hosts.
func Desire(ctx context.Context, env *steps.Env, observed *plan.Observed, upgradeMDs bool) (*Desired, error) {
	c := env.Cluster
	d := &Desired{Plan: plan.Desired{Version: strings.TrimPrefix(c.Versions.Kubernetes, "v"), Addons: map[string]string{}}}
	for _, n := range env.Nodes {
		script, err := env.PrereqScript(n.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		d.Plan.Hosts = append(d.Plan.Hosts, plan.DesiredHost{
			Name: n.Name, Address: n.Target.Address, Role: n.Role, Leader: n.Host.IsLeader, UpgradeIndex: n.Host.UpgradeIndex,
			PrereqHash: steps.Hash([]byte(script)),
		})
	}
	cni, err := addons.Render(c)
	if err != nil {
		return nil, err
	}
	if len(cni) > 0 {
		d.CNI = cni
		d.Plan.Addons["cni"] = steps.Hash(cni)
	}
	if c.MachineController.Deploy != nil && *c.MachineController.Deploy {
		h, err := steps.MachineControllerHash(env)
		if err != nil {
			return nil, err
		}
		d.Plan.Addons["machine-controller"] = h
	}
	mds, err := workers.MachineDeployments(c)
	if err != nil {
		return nil, err
	}
	if len(mds) > 0 {
		out, err := workers.Marshal(mds)
		if err != nil {
			return nil, err
		}
		d.MachineDeployments = out
		d.Plan.Addons["machine-deployments"] = steps.Hash(out)
	}
	if observed.Cluster.Exists {
		kc, err := env.Kube(ctx)
		if err != nil {
			return nil, err
		}
		names := map[string]bool{}
		for _, n := range env.Nodes {
			names[n.Name] = true
		}
		if d.Plan.PendingCSRs, err = steps.PendingCSRs(ctx, kc, names); err != nil {
			return nil, err
		}
	}
	_ = upgradeMDs
	return d, nil
}

// Implementations binds step names to their work for one run.
func Implementations(env *steps.Env, d *Desired) map[string]steps.Func {
	return map[string]steps.Func{
		plan.StepPrerequisites:     env.Prerequisites,
		plan.StepInstall:           env.InstallKubernetes,
		plan.StepInit:              env.Init,
		plan.StepInitFinish:        env.InitFinish,
		plan.StepRepair:            env.RemoveStaleMember,
		plan.StepJoinControlPlane:  env.JoinControlPlane,
		plan.StepJoinWorker:        env.JoinWorker,
		plan.StepCNI:               env.ApplyAddon("cni", d.CNI),
		plan.StepApproveCSRs:       env.ApproveCSRs,
		plan.StepWaitReady:         env.WaitNodesReady,
		plan.StepMachineController: env.DeployMachineController(d.Plan.Addons["machine-controller"]),
		plan.StepMachineDeployment: env.ApplyAddon("machine-deployments", d.MachineDeployments),
		plan.StepUpgradePreflight:  env.UpgradePreflight,
		plan.StepUpgradeLeader:     env.UpgradeLeader,
		plan.StepUpgradeNode:       env.UpgradeNode,
	}
}
