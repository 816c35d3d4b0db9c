package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/kube"
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
	// KubeletBumps are partial MachineDeployments (the kubelet version only) for pools the
	// manifest does not declare, applied with --upgrade-machine-deployments.
	KubeletBumps []byte
}

// Desire renders what the manifest asks for. When the cluster exists it also reads what
// planning needs from it: pending certificate requests of the manifest's hosts, Nodes that lack
// the manifest's labels, annotations or taints, and the kubelet version of each
// MachineDeployment (kept unless upgradeMDs).
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
	var kc *kube.Client
	if observed.Cluster.Exists {
		if kc, err = env.Kube(ctx); err != nil {
			return nil, err
		}
	}
	existing, err := steps.KubeletVersions(ctx, kc)
	if err != nil {
		return nil, err
	}
	changed, undeclared := workers.PinKubelet(mds, existing, c.Versions.Kubernetes, upgradeMDs)
	for _, u := range changed {
		d.Plan.KubeletUpgrades = append(d.Plan.KubeletUpgrades, fmt.Sprintf("%s %s → %s", u.Name, u.From, u.To))
	}
	if len(mds) > 0 || len(undeclared) > 0 {
		out, err := workers.Marshal(mds)
		if err != nil {
			return nil, err
		}
		d.MachineDeployments = out
		// MachineDeployments the manifest does not declare get only their kubelet version
		// applied, as a partial object under a field manager of its own.
		bumps := workers.KubeletBumps(undeclared, c.Versions.Kubernetes)
		d.KubeletBumps = bumps
		d.Plan.Addons["machine-deployments"] = steps.Hash(out, bumps)
	}
	if kc != nil {
		names := map[string]bool{}
		for _, n := range env.Nodes {
			names[n.Name] = true
		}
		// Observations: the probe takes them over in the next commit.
		if observed.Cluster.PendingCSRs, err = steps.PendingCSRs(ctx, kc, names); err != nil {
			return nil, err
		}
		if observed.Cluster.MetadataDrift, err = env.MetadataDrift(ctx, kc); err != nil {
			return nil, err
		}
	}
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
		plan.StepNodeMetadata:      env.ApplyNodeMetadata,
		plan.StepWaitReady:         env.WaitNodesReady,
		plan.StepMachineController: env.DeployMachineController(d.Plan.Addons["machine-controller"]),
		plan.StepMachineDeployment: env.ApplyMachineDeployments(d.MachineDeployments, d.KubeletBumps),
		plan.StepUpgradePreflight:  env.UpgradePreflight,
		plan.StepUpgradeLeader:     env.UpgradeLeader,
		plan.StepUpgradeNode:       env.UpgradeNode,
	}
}
