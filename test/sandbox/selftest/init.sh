#!/bin/bash
# kubeadm init on the self-test's control plane. Go 1.26 rejects the bracketed IPv4 literal in
# kubeadm's HTTPProxyCIDR preflight check (kubernetes/kubernetes#135013): ignore only that.
# nf_conntrack_max is global: outside the host's initial network namespace it is read-only
# (mode 0444), so kube-proxy must not try to set it (maxPerCore: 0), as in kind.
# usage: init.sh VERSION ADVERTISE_IP POD_CIDR RESOLV_CONF
set -euo pipefail
version=$1 ip=$2 pods=$3 resolv=$4
cat >/root/kubeadm.yaml <<YAML
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: $ip
nodeRegistration:
  criSocket: unix:///run/containerd/containerd.sock
  ignorePreflightErrors: [HTTPProxyCIDR]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $version
controlPlaneEndpoint: $ip:6443
networking:
  podSubnet: $pods
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
resolvConf: $resolv
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
YAML
kubeadm init --config /root/kubeadm.yaml >/root/kubeadm-init.log 2>&1 || { tail -30 /root/kubeadm-init.log >&2; exit 1; }
kubeadm token create --print-join-command
