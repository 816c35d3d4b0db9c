#!/bin/bash
# kubeadm init on the self-test's control plane, and on the apply benchmark's first control
# plane (test/bench/apply), which passes the load balancer's endpoint and a certificate key so
# that more control planes can join. Go 1.26 rejects the bracketed IPv4 literal in kubeadm's
# HTTPProxyCIDR preflight check (kubernetes/kubernetes#135013): ignore only that.
# nf_conntrack_max is global: outside the host's initial network namespace it is read-only
# (mode 0444), so kube-proxy must not try to set it (maxPerCore: 0), as in kind. The hosts share
# the machine's disk, so disk-pressure eviction is off, as in slipway's sandbox manifest.
# On a cgroup v1 host (the hosts see the machine's cgroups), the kubelet must be allowed to run
# (failCgroupV1: false, ignored on cgroup v2), and kubeadm's SystemVerification preflight, which
# fails on cgroup v1 without reading that setting, must be ignored.
# usage: init.sh VERSION ADVERTISE_IP POD_CIDR RESOLV_CONF [ENDPOINT [CERTIFICATE_KEY]]
set -euo pipefail
version=$1 ip=$2 pods=$3 resolv=$4 endpoint=${5:-$2:6443} key=${6:-}
upload=()
if [ -n "$key" ]; then upload=(--upload-certs); fi
ignore=HTTPProxyCIDR
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then ignore=$ignore,SystemVerification; fi
cat >/root/kubeadm.yaml <<YAML
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
${key:+certificateKey: $key}
localAPIEndpoint:
  advertiseAddress: $ip
nodeRegistration:
  criSocket: unix:///run/containerd/containerd.sock
  ignorePreflightErrors: [$ignore]
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
failCgroupV1: false
resolvConf: $resolv
evictionHard: {memory.available: 100Mi, nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
YAML
kubeadm init --config /root/kubeadm.yaml "${upload[@]}" >/root/kubeadm-init.log 2>&1 || { tail -30 /root/kubeadm-init.log >&2; exit 1; }
kubeadm token create --print-join-command
