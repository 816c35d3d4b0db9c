#!/bin/bash
# Raw node preparation for the self-test, deliberately independent of slipway: trust the sandbox
# apt repository, install kubeadm, kubelet and kubectl from it, install containerd from its
# release tarball (the host's own is Debian's 1.6; Kubernetes v1.36 needs containerd 2) and point
# it at the registry mirror.
# usage: install.sh FILES_URL MINOR DEB_VERSION REGISTRY_URL KUBERNETES_VERSION CONTAINERD_RELEASES CONTAINERD_VERSION
set -euo pipefail
files=$1 minor=$2 debver=$3 registry=$4 version=$5 releases=$6 ctrd=$7
repo="$files/core:/stable:/$minor/deb/"

# containerd's release tarball holds bin/containerd, bin/containerd-shim-runc-v2, bin/ctr: unpacked
# into /usr/local, they come first in PATH, and the Debian unit is told to start this containerd.
# runc stays the host's (/usr/sbin/runc, or the sandbox's wrapper in /usr/local/sbin).
tarball=containerd-$ctrd-linux-amd64.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL -o "$tmp/$tarball" "$releases/v$ctrd/$tarball"
curl -fsSL -o "$tmp/$tarball.sha256sum" "$releases/v$ctrd/$tarball.sha256sum"
(cd "$tmp" && sha256sum --check --quiet "$tarball.sha256sum")
tar -xzf "$tmp/$tarball" -C /usr/local
mkdir -p /etc/systemd/system/containerd.service.d
cat >/etc/systemd/system/containerd.service.d/10-release.conf <<UNIT
[Service]
ExecStart=
ExecStart=/usr/local/bin/containerd
UNIT
systemctl daemon-reload

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
# containerd 2 writes a version-3 configuration: the CRI registry's config_path and the pinned
# sandbox image sit under plugins.'io.containerd.cri.v1.images', SystemdCgroup under the runc
# runtime's options of plugins.'io.containerd.cri.v1.runtime'. The checks make a renamed key fail
# here rather than as a kubelet that cannot start pods.
mkdir -p /etc/containerd
/usr/local/bin/containerd config default >/etc/containerd/config.toml
sed -i -e 's/SystemdCgroup = false/SystemdCgroup = true/' \
  -e "/^ *\[plugins.'io.containerd.cri.v1.images'.registry\]/,/^ *\[/s|config_path = ''|config_path = '/etc/containerd/certs.d'|" \
  -e "s|^\( *\)sandbox = .*|\1sandbox = '$pause'|" /etc/containerd/config.toml
for want in "SystemdCgroup = true" "config_path = '/etc/containerd/certs.d'" "sandbox = '$pause'"; do
  grep -qF "$want" /etc/containerd/config.toml || { echo "install.sh: no \"$want\" in containerd's configuration" >&2; exit 1; }
done
systemctl restart containerd
ctr version | sed -n '/^Server:/,$p' | grep -q "Version: *v$ctrd\$" || { echo "install.sh: containerd $ctrd is not the one running:" >&2; ctr version >&2; exit 1; }
sysctl -qw net.bridge.bridge-nf-call-iptables=1
