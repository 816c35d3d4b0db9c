// Package controller owns the machine-controller's reconcilers: MachineDeployment → MachineSet →
// Machine, the health and safety checks that decide when Machines are replaced or frozen, the
// orphan sweep, the serving-CSR approver and the manager that wires them with leader election,
// probes and metrics. It talks to clouds only through cloud.Provider and never imports a cloud SDK.
// It acts on a Node only when the provider confirms that the Node's server is the Machine's
// (whatever spec.providerID says), and its RBAC, generated from the markers here, is checked
// against an allow-list by a test (see SECURITY.md).
//
// Every reconciler has the same skeleton (as Cluster API's do): get the object, ensure the
// finalizer, defer the status patch, then split into the delete and the normal path, whose steps
// are listed as a slice of functions. Files are named <kind>_controller_<concern>.go.
package controller
