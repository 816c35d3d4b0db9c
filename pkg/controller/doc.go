// Package controller owns the machine-controller's reconcilers: MachineDeployment → MachineSet →
// Machine, the health and safety checks that decide when Machines are replaced or frozen, the
// orphan sweep, the serving-CSR approver and the manager that wires them with leader election,
// probes and metrics. It talks to clouds only through cloud.Provider and never imports a cloud SDK.
// It links a Node to a Machine only on the provider's answer (at most a minute old) that the
// Node's server is the Machine's, whatever spec.providerID says; it drains and deletes only a
// linked Node (same UID and provider ID) or one the provider confirms. Its RBAC, generated from
// the markers here, is checked against an allow-list by a test (see SECURITY.md).
//
// Requests are counted (test/bench/controller.md): owners gather their Machines' events for a
// second before they reconcile (coalesce.go), nothing is read that the cache or this process
// already knows, and the cloud's answer that a server runs stands for a minute while the
// Machine's Node is Ready or not there yet. A lost server silences its kubelet; the Node turning
// NotReady reconciles the Machine, which then asks the cloud.
//
// Every reconciler has the same skeleton (as Cluster API's do): get the object, ensure the
// finalizer, defer the status patch, then split into the delete and the normal path, whose steps
// are listed as a slice of functions. Files are named <kind>_controller_<concern>.go.
package controller
