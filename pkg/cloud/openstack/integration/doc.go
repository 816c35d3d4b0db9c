// Package integration runs the machine-controller's scenarios (test/envtest/scenarios) on a
// real kube-apiserver with the OpenStack provider and its simulator in place of the in-memory
// cloud, with injected API errors and latency, and checks what only a cloud can show: that
// nothing leaks and that the cloud never holds more servers than the rollout bounds allow. It
// holds tests only.
package integration
