// Package scenarios holds the machine-controller's end-to-end scenarios against a real
// kube-apiserver, written once and run against any cloud: the in-memory fake
// (pkg/controller's tests) or the OpenStack provider with its simulator. A cloud takes part by
// implementing Cloud.
package scenarios
