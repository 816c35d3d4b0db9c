// Package webhook owns the admission webhook of cluster.k8s.io/v1alpha1: it defaults
// MachineDeployments and validates MachineDeployments, MachineSets and Machines (selector matches
// labels, legal maxSurge/maxUnavailable, kubelet version inside the supported window, SSH keys
// that parse, an immutable Machine spec but for the controller-owned spec.providerID and the
// Node's labels, annotations and taints, which change in place). It also
// guards what a Machine may not steer: the provider's spec check (Options.SpecChecks) refuses
// cloudProviderSpec fields that choose the cloud or the identity and references outside the
// Machine's namespace, and only the controller's own user (Options.Controllers) may write
// spec.providerID and the providers' state annotations, which templates may not carry at all.
// The rules that need no request are pure functions in the validation sub-package, which
// slipway also runs on the MachineDeployments it renders, before apply.
//
// It never calls a cloud: admission must be fast and must not fail because a cloud API is slow,
// so cloud checks are the controller's, reported as the Machine's Validated condition. It owns
// the webhook's serving certificate too, which the controller renews before it expires.
package webhook
