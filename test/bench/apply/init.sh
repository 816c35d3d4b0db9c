#!/bin/bash
# Raw-kubeadm baseline: kubeadm init of an HA control plane behind the sandbox load balancer,
# with the same settings slipway's sandbox manifest makes (kubelet resolvConf, no conntrack
# sysctl, no disk-pressure eviction), then the join command on stdout.
# usage: init.sh VERSION ADVERTISE_IP ENDPOINT POD_CIDR RESOLV_CONF CERTIFICATE_KEY
set -euo pipefail
version=$1 ip=$2 endpoint=$3 pods=$4 resolv=$5 key=$6
cat >/root/kubeadm.yaml <<YAML
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
certificateKey: $key
localAPIEndpoint:
  advertiseAddress: $ip
nodeRegistration:
  criSocket: unix:///run/containerd/containerd.sock
  ignorePreflightErrors: [HTTPProxyCIDR]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $version
controlPlaneEndpoint: $endpoint
networking:
  podSubnet: $pods
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
resolvConf: $resolv
evictionHard: {memory.available: 100Mi, nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
YAML
kubeadm init --config /root/kubeadm.yaml --upload-certs >/root/kubeadm-init.log 2>&1 || { tail -30 /root/kubeadm-init.log >&2; exit 1; }
kubeadm token create --print-join-command
