// Package kubeadm renders the configuration files kubeadm reads on each host: the v1beta4
// InitConfiguration, ClusterConfiguration, JoinConfiguration and UpgradeConfiguration, the
// KubeletConfiguration and KubeProxyConfiguration component configs, and per-host kubeadm patches
// for kubelet settings that differ between hosts. Everything here is a pure function of the
// loaded cluster manifest and a few observed facts (cgroup version, resolver file); it owns no SSH
// and no API calls. The types in types.go are a deliberately small subset of kubeadm's own API,
// kept in step with k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4, so that slipway does
// not depend on k8s.io/kubernetes; tests check the output against a real kubeadm binary.
package kubeadm
