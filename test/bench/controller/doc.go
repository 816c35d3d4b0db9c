// Package controller benchmarks the machine-controller against a real kube-apiserver with the
// in-memory cloud: time to scale one MachineDeployment 0→500 and 500→0, API requests per
// Machine, and the controller's resident memory, also at 5,000 Machines across 10
// MachineDeployments. The controller runs as its own process (fakecontroller) so that its RSS is
// its own. Run: go test ./test/bench/controller -run '^$' -bench . -benchtime 1x
package controller
