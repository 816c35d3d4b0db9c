// Package addons renders the cluster add-ons slipway applies after kubeadm init: the pod
// network (flannel by default, canal or cilium) as manifests embedded in the binary, with the
// cluster's pod subnet, backend and MTU filled in and every image rewritten when
// registryConfiguration.overwriteRegistry is set. Images lists the pinned images of the
// cluster's add-ons in one place, so that sandboxes and air-gapped sites can preload them.
//
// The manifests are written for slipway from the projects' documented installation facts, not
// copied from upstream YAML. Flannel is complete. Canal is flannel for networking plus Calico's
// felix for network policy (calico-node in policy-only mode, calico-kube-controllers and the
// Calico CRDs with open schemas). Cilium is a minimal install: the agent DaemonSet and the
// operator Deployment with their RBAC and configuration, cluster-pool IPAM from the pod subnet,
// VXLAN tunnelling and optional kube-proxy replacement; Hubble, the Envoy proxy and Cluster
// Mesh are left out, and the operator creates Cilium's CRDs itself. Canal and Cilium are
// validated against a real kube-apiserver but not yet run on sandbox hosts.
//
// machine-controller manifests live in manifests/machine-controller, not here.
package addons
