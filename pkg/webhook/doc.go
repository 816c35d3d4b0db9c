// Package webhook owns the admission webhook of cluster.k8s.io/v1alpha1: it defaults
// MachineDeployments and validates MachineDeployments, MachineSets and Machines (selector matches
// labels, legal maxSurge/maxUnavailable, kubelet version inside the supported window, SSH keys
// that parse, an immutable Machine spec but for the controller-owned spec.providerID). It never calls a cloud: admission must be fast and must
// not fail because a cloud API is slow, so cloud checks are the controller's, reported as the
// Machine's Validated condition.
package webhook
