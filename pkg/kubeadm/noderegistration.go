package kubeadm

import (
	"fmt"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// controlPlaneTaint is what kubeadm puts on control-plane nodes by default.
var controlPlaneTaint = taint{Key: "node-role.kubernetes.io/control-plane", Effect: "NoSchedule"}

// nodeRegistration renders the nodeRegistration block shared by init and join.
func nodeRegistration(c *v1beta1.Cluster, p NodeParams, controlPlane bool) (nodeRegistrationOptions, error) {
	name, err := p.nodeName()
	if err != nil {
		return nodeRegistrationOptions{}, err
	}
	if p.Host.PrivateAddress == "" {
		return nodeRegistrationOptions{}, fmt.Errorf("host %s: no private address (was the manifest defaulted?)", p.Host.PublicAddress)
	}
	// The list is always written out: a missing list would let kubeadm choose, and the manifest
	// is the truth (an explicit empty list means an untainted control plane).
	taints := []taint{}
	switch {
	case p.Host.Taints != nil:
		for _, t := range p.Host.Taints {
			taints = append(taints, taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
	case controlPlane:
		taints = append(taints, controlPlaneTaint)
	}
	args := []arg{{Name: "node-ip", Value: p.Host.PrivateAddress}}
	if c.CloudProvider.External {
		args = append(args, arg{Name: "cloud-provider", Value: "external"})
	}
	return nodeRegistrationOptions{
		Name:                  name,
		CRISocket:             CRISocket,
		Taints:                taints,
		KubeletExtraArgs:      args,
		IgnorePreflightErrors: p.IgnorePreflightErrors,
	}, nil
}

// hostPatches points kubeadm at PatchesDir when the host has kubelet settings of its own, which
// KubeletPatch renders. Hosts without them get no directory, so that none has to exist.
func hostPatches(h v1beta1.Host) *patches {
	if _, ok := kubeletPatch(h); !ok {
		return nil
	}
	return &patches{Directory: PatchesDir}
}
