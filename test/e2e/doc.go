// Package e2e holds slipway's end-to-end tests: real clusters built by the slipway binary on
// Docker sandbox hosts (test/sandbox) with real kubeadm, kubelet and containerd, and worker pools
// whose machines are servers of the OpenStack simulator booted as such hosts. The tests skip
// under -short; with CI=true a missing Docker daemon is a failure, not a skip.
package e2e
