#!/bin/bash
# Raw node preparation for the self-test, deliberately independent of slipway: trust the sandbox
# apt repository, install kubeadm, kubelet and kubectl from it, and point containerd at the
# registry mirror.
# usage: install.sh FILES_URL MINOR DEB_VERSION REGISTRY_URL KUBERNETES_VERSION
set -euo pipefail
files=$1 minor=$2 debver=$3 registry=$4 version=$5
repo="$files/core:/stable:/$minor/deb/"

mkdir -p /etc/apt/keyrings
curl -fsSL "${repo}Release.key" | gpg --dearmor --yes -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] $repo /" >/etc/apt/sources.list.d/kubernetes.list
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "kubeadm=$debver" "kubelet=$debver" "kubectl=$debver" >/dev/null

# containerd's own default sandbox image is older than the one kubeadm deploys.
pause=$(kubeadm config images list --kubernetes-version "$version" | grep /pause:)
mkdir -p /etc/containerd/certs.d/registry.k8s.io
cat >/etc/containerd/certs.d/registry.k8s.io/hosts.toml <<TOML
server = "https://registry.k8s.io"

[host."$registry"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
TOML
containerd config default >/etc/containerd/config.toml
sed -i -e 's/SystemdCgroup = false/SystemdCgroup = true/' \
  -e 's|config_path = ""|config_path = "/etc/containerd/certs.d"|' \
  -e "s|sandbox_image = .*|sandbox_image = \"$pause\"|" /etc/containerd/config.toml
systemctl restart containerd
sysctl -qw net.bridge.bridge-nf-call-iptables=1
