// Package ccm proves that the real OpenStack cloud-controller-manager (openstack-cloud-controller-
// manager from k8s.io/cloud-provider-openstack, built by build.sh beside this file) works against
// the OpenStack simulator: run as a process against a real kube-apiserver and etcd, it initializes
// the Node of a simulator server (provider ID, addresses, instance-type, zone and region labels,
// the uninitialized taint lifted), follows its addresses, taints it when the server is shut off
// and deletes it when the server is gone. A second test runs it as slipway deploys it: with the
// arguments of the DaemonSet and the cloud.conf of the Secret that pkg/ccmdeploy renders from the
// OS_* credentials, applied to the API server and read back, as the ServiceAccount whose RBAC the
// manifests grant. It is a package of its own so that its kube-apiserver is not shared
// with the machine-controller's tests.
package ccm
