#!/bin/bash
# Raw-kubeadm baseline of one node's upgrade, as the kubeadm upgrade documentation gives it.
# Phases, each timed by the caller: kubeadm (new kubeadm package, then `kubeadm upgrade apply`
# on the first control plane or `kubeadm upgrade node` elsewhere) and kubelet (new kubelet and
# kubectl packages, kubelet restart). Draining and uncordoning run from the first control plane.
# usage: upgrade.sh kubeadm|kubelet FILES_URL MINOR DEB_VERSION VERSION first|other
set -euo pipefail
phase=$1 files=$2 minor=$3 debver=$4 version=$5 role=$6
export DEBIAN_FRONTEND=noninteractive
case $phase in
kubeadm)
  echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] $files/core:/stable:/$minor/deb/ /" >/etc/apt/sources.list.d/kubernetes.list
  apt-get update -qq
  apt-mark unhold kubeadm >/dev/null 2>&1 || true
  apt-get install -y -qq --allow-downgrades "kubeadm=$debver" >/dev/null
  # On cgroup v1 (this machine's Docker) kubeadm's SystemVerification refuses v1.35 and later,
  # as in init.sh; the kubelet was configured with failCgroupV1: false at install.
  ignore=HTTPProxyCIDR
  if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then ignore=$ignore,SystemVerification; fi
  if [ "$role" = first ]; then
    kubeadm upgrade apply -y "$version" --ignore-preflight-errors="$ignore" >/root/kubeadm-upgrade.log 2>&1 || { tail -30 /root/kubeadm-upgrade.log >&2; exit 1; }
  else
    kubeadm upgrade node --ignore-preflight-errors="$ignore" >/root/kubeadm-upgrade.log 2>&1 || { tail -30 /root/kubeadm-upgrade.log >&2; exit 1; }
  fi
  ;;
kubelet)
  apt-get install -y -qq "kubelet=$debver" "kubectl=$debver" >/dev/null
  systemctl daemon-reload
  systemctl restart kubelet
  ;;
esac
