// Package controller is the machine-controller's manager: NewManager and Setup wire the
// reconcilers of its subpackages with leader election, probes, metrics and the admission webhook,
// and Options tune them. Each reconciler has its own package, as Cluster API lays them out:
//
//   - machine turns a Machine into a server and a Node, and releases both on deletion;
//   - machineset keeps the number of a MachineSet's Machines at its replicas;
//   - machinedeployment rolls MachineSets over when a MachineDeployment's template changes;
//   - health replaces the Machines that the Machine controller judged unhealthy;
//   - orphans sweeps the servers that belong to no Machine, and what forced deletions left;
//   - csrapprover approves the serving certificates of kubelets that joined as Machines.
//
// What several of them need lives under internal/: conditions, machineutil (readiness,
// availability, phase), index (the cache indexes), coalesce (gathering Machine events),
// cloudtrack (the one cloud.Provider they share, which learns whether the cloud answers and
// which creates are in flight) and leftovers (the record of servers forced deletions left).
//
// Three checks hold the controllers back, each named for what it checks: a MachineSet with more
// Machines than its replicas plus a threshold, which it did not make, freezes (machineset's
// overshoot.go); health-based replacement freezes while the API server or the cloud is
// unreachable (reachability.go here); the orphan sweep deletes only servers that have had no
// Machine for a grace period and have no Create in flight (orphans).
//
// The controllers talk to clouds only through cloud.Provider and never import a cloud SDK. They
// link a Node to a Machine only on the provider's answer (at most a minute old) that the Node's
// server is the Machine's, whatever spec.providerID says; they drain and delete only a linked
// Node (same UID and provider ID) or one the provider confirms. Their RBAC, generated from the
// markers in these packages (make generate-machine-controller reads ./pkg/controller/...), is
// checked against an allow-list by a test (see SECURITY.md).
//
// Requests are counted (test/bench/controller.md): owners gather their Machines' events for a
// second before they reconcile (internal/coalesce), nothing is read that the cache or this
// process already knows, and the cloud's answer that a server runs stands for a minute while the
// Machine's Node is Ready or not there yet. A lost server silences its kubelet; the Node turning
// NotReady reconciles the Machine, which then asks the cloud.
//
// Every reconciler has the same skeleton (as Cluster API's do): get the object (the Machine
// reconciler then ensures its finalizer), defer the status patch, then split into the delete and
// the normal path, whose steps are listed as a slice of functions. Files within a package are named for their concern
// (machine/delete.go, machineset/overshoot.go).
package controller
