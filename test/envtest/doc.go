// Package envtest runs the machine-controller's tests against a real kube-apiserver and etcd,
// built from the Go module proxy by test/kube/build.sh, through controller-runtime's envtest. It
// installs the CRDs, the RBAC with its Secrets policy and the admission webhook from
// manifests/, serves the webhook, runs the controllers as the machine-controller service
// account (so the generated least-privilege RBAC is exercised), and plays the kubelet: it
// registers Nodes for servers and deletes evicted pods. Any cloud.Provider can be plugged in, so the OpenStack provider and its simulator can
// run the same scenarios (package scenarios) as the in-memory fake.
package envtest
