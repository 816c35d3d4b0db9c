#!/usr/bin/env bash
# Builds Kubernetes server/node binaries and etcd from the Go module proxy into a cache directory
# keyed by version and Go toolchain, so that envtest, the sandbox and CI share one build.
#
# usage: test/kube/build.sh <kubernetes-version> [binary ...]
#   binaries default to: kubeadm kubelet kubectl kube-apiserver kube-controller-manager
#                        kube-scheduler kube-proxy
# env:   SLIPWAY_CACHE (default ~/.cache/slipway), ETCD_VERSION (default: the one kubeadm wants)
# prints the bin directory on stdout.
set -euo pipefail

version=${1:?usage: build.sh vX.Y.Z [binary ...]}
shift
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)

case "$version" in v1.*.*) ;; *) echo "build.sh: version must look like v1.36.3, got $version" >&2; exit 2 ;; esac
minor=${version#v1.}; minor=${minor%%.*}
# shellcheck source=test/kube/workmod.sh
. "$(dirname "$0")/workmod.sh"

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
out="$cache/kube/$version-$gover"
bin="$out/bin"
mkdir -p "$bin"
# One build per version at a time: envtest, the sandbox and CI may all ask at once.
exec 9>"$out/.lock"
flock 9

export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local

missing=()
for b in "${bins[@]}"; do [ -x "$bin/$b" ] || missing+=("$b"); done

if [ ${#missing[@]} -gt 0 ]; then
  work="$out/src"
  kube_workmod "$work" "$version"
  ld=$(kube_ldflags "$version")
  pkgs=()
  for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  echo "building ${missing[*]} $version (cold: several minutes)" >&2
  # The binaries are stripped (-s -w), so the compiler need not emit DWARF either: a cold build is shorter.
  (cd "$work" && go build -trimpath -gcflags=all=-dwarf=false -ldflags "$ld" -o "$bin/" "${pkgs[@]}")
fi

# etcd: the version kubeadm expects for this minor.
if [ -z "${ETCD_VERSION:-}" ]; then
  case "$minor" in
    33) ETCD_VERSION=v3.5.21 ;;
    34) ETCD_VERSION=v3.6.4 ;;
    35) ETCD_VERSION=v3.6.6 ;;
    36) ETCD_VERSION=v3.6.8 ;;
    37) ETCD_VERSION=v3.7.0 ;;
    *) ETCD_VERSION=v3.6.4 ;;
  esac
fi
etcdbin="$cache/etcd/$ETCD_VERSION-$gover/bin"
mkdir -p "$etcdbin"
exec 8>"$cache/etcd/$ETCD_VERSION-$gover/.lock"
flock 8
if [ ! -x "$etcdbin/etcd" ]; then
  mkdir -p "$etcdbin" "$cache/etcd/$ETCD_VERSION-$gover/src"
  ew="$cache/etcd/$ETCD_VERSION-$gover/src"
  major=${ETCD_VERSION#v}; major=${major%%.*}
  if [ ! -f "$ew/go.mod" ]; then
    printf 'module slipway.local/etcdbuild\n\ngo 1.24\n' >"$ew/go.mod"
    (cd "$ew" && go get "go.etcd.io/etcd/server/v$major@$ETCD_VERSION" >&2)
  fi
  echo "building etcd $ETCD_VERSION" >&2
  (cd "$ew" && go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w" -o "$etcdbin/etcd" "go.etcd.io/etcd/server/v$major")
fi
# etcdutl and etcdctl, which registry.k8s.io/etcd ships beside etcd: `slipway apply
# --restore-from` runs etcdutl's `snapshot restore` from the cluster's own etcd image, and the
# scheduled snapshots (etcd.snapshots) run etcdctl's `snapshot save` from it.
for tool in etcdutl etcdctl; do
  [ -x "$etcdbin/$tool" ] && continue
  ew="$cache/etcd/$ETCD_VERSION-$gover/src-$tool"
  mkdir -p "$ew"
  major=${ETCD_VERSION#v}; major=${major%%.*}
  if [ ! -f "$ew/go.mod" ]; then
    printf 'module slipway.local/%sbuild\n\ngo 1.24\n' "$tool" >"$ew/go.mod"
    (cd "$ew" && go get "go.etcd.io/etcd/$tool/v$major@$ETCD_VERSION" >&2)
  fi
  echo "building $tool $ETCD_VERSION" >&2
  (cd "$ew" && go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w" -o "$etcdbin/$tool" "go.etcd.io/etcd/$tool/v$major")
done
ln -sf "$etcdbin/etcd" "$bin/etcd"
ln -sf "$etcdbin/etcdutl" "$bin/etcdutl"
ln -sf "$etcdbin/etcdctl" "$bin/etcdctl"
echo "$bin"
