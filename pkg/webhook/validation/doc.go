// Package validation holds the machine-controller's admission rules for Machines, MachineSets
// and MachineDeployments as pure functions of the objects: selectors that match their
// templates, legal rollout bounds, a kubelet inside the supported window, SSH keys that parse,
// supported operating systems and deletion policies, no controller-owned fields in templates, and
// each provider's check of its cloudProviderSpec (Checks.Specs). The webhook serves them, and
// slipway runs them on the MachineDeployments it renders from the manifest before apply, so that
// a worker pool the controller would refuse is refused first, with the manifest's field paths.
// It imports nothing of controller-runtime's manager or of any cloud SDK.
package validation
