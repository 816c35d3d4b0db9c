package steps

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// ApplyAddon returns a step that server-side applies manifests and records their hash under
// name, so that the next apply skips them while they are unchanged.
func (e *Env) ApplyAddon(name string, manifests []byte) Func {
	return func(ctx context.Context, _ string) error {
		c, err := e.Kube(ctx)
		if err != nil {
			return err
		}
		objs, err := kube.Decode(manifests)
		if err != nil {
			return fmt.Errorf("%s manifests: %w", name, err)
		}
		if err := c.Apply(ctx, objs); err != nil {
			return err
		}
		e.logf("", "applied %d %s objects", len(objs), name)
		return RecordAddon(ctx, c, name, Hash(manifests))
	}
}

// KubeletUpgradeManager is the field manager of the kubelet version that
// --upgrade-machine-deployments sets on MachineDeployments the manifest does not declare.
const KubeletUpgradeManager = "slipway-kubelet-upgrade"

// ApplyMachineDeployments applies the manifest's worker pools, then the kubelet-only partial
// MachineDeployments in bumps, and records the hash of both.
func (e *Env) ApplyMachineDeployments(mds, bumps []byte) Func {
	return func(ctx context.Context, _ string) error {
		c, err := e.Kube(ctx)
		if err != nil {
			return err
		}
		objs, err := kube.Decode(mds)
		if err != nil {
			return fmt.Errorf("machine-deployments manifests: %w", err)
		}
		partial, err := kube.Decode(bumps)
		if err != nil {
			return fmt.Errorf("kubelet upgrades of MachineDeployments: %w", err)
		}
		if err := c.Apply(ctx, objs); err != nil {
			return err
		}
		if err := c.ApplyAs(ctx, KubeletUpgradeManager, partial); err != nil {
			return err
		}
		e.logf("", "applied %d MachineDeployments, raised the kubelet version of %d more", len(objs), len(partial))
		return RecordAddon(ctx, c, "machine-deployments", Hash(mds, bumps))
	}
}

// KubeletVersions returns the kubelet version of every MachineDeployment in the workers'
// namespace, or nothing when there is no cluster yet or no machine-controller CRDs in it.
func KubeletVersions(ctx context.Context, kc *kube.Client) (map[string]string, error) {
	out := map[string]string{}
	if kc == nil {
		return out, nil
	}
	gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
	list, err := kc.Dynamic.Resource(gvr).Namespace(workers.Namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("listing MachineDeployments in %s: %w", workers.Namespace, err)
	}
	for _, md := range list.Items {
		v, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "versions", "kubelet")
		out[md.GetName()] = v
	}
	return out, nil
}
