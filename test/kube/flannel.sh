#!/usr/bin/env bash
# Builds flannel's two node binaries from the Go module proxy into a cache keyed by their inputs
# (version, Go toolchain, cgo setting, this script), so that a warm call only checks a file:
#   flanneld    the daemon of ghcr.io/flannel-io/flannel, from github.com/flannel-io/flannel;
#   cni-plugin  the `flannel` CNI plugin that ghcr.io/flannel-io/flannel-cni-plugin copies into
#               /opt/cni/bin. Its own module (github.com/flannel-io/cni-plugin) is refused by the
#               proxy (403), so it is built from github.com/containernetworking/plugins, whose
#               plugins/meta/flannel it was split from; v0.9.1 is the last release that has it.
#
# usage: test/kube/flannel.sh flanneld vX.Y.Z | cni-plugin vX.Y.Z
# env:   SLIPWAY_CACHE (default ~/.cache/slipway), FLANNEL_CGO=1 to build flanneld with cgo
# prints the binary's path on stdout.
#
# Why flanneld is built without cgo by default: cgo is used by one file only, the UDP backend's
# packet forwarder (pkg/backend/udp/cproxy_amd64.go, a C loop); the vxlan and host-gw backends
# that slipway renders are pure Go (netlink). With CGO_ENABLED=0 that file drops out and its
# package no longer compiles, so the build adds test/kube/_flannel/udp_nocgo.go to a copy of the
# module: stubs that make choosing the udp backend exit with a clear message. The result is a
# static binary (the image needs no particular libc) built without gcc or external linking.
set -euo pipefail

what=${1:?usage: flannel.sh flanneld|cni-plugin vX.Y.Z}
version=${2:?usage: flannel.sh flanneld|cni-plugin vX.Y.Z}
here=$(cd "$(dirname "$0")" && pwd)
case "$version" in v[0-9]*.*.*) ;; *) echo "flannel.sh: version must look like v0.27.4, got '$version'" >&2; exit 2 ;; esac
case "$version" in *[!a-zA-Z0-9.+-]*) echo "flannel.sh: bad version '$version'" >&2; exit 2 ;; esac

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
export GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
cgo=${FLANNEL_CGO:-0}
case "$cgo" in 0 | 1) ;; *) echo "flannel.sh: FLANNEL_CGO must be 0 or 1" >&2; exit 2 ;; esac
# format changes whenever the way this script builds changes, so old outputs are not reused.
format=1

case "$what" in
  flanneld)
    module=github.com/flannel-io/flannel; pkg=$module; bin=flanneld; cold="4-9 minutes"
    ld="-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$version" ;;
  cni-plugin)
    module=github.com/containernetworking/plugins; pkg=$module/plugins/meta/flannel; bin=flannel; cgo=0; cold="30 seconds"
    ld="-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$version" ;;
  *) echo "flannel.sh: unknown binary '$what': want flanneld or cni-plugin" >&2; exit 2 ;;
esac

# The key covers every input besides module, version and toolchain, which name the directory.
stub=""
if [ "$what" = flanneld ] && [ "$cgo" = 0 ]; then stub=$(cat "$here/_flannel/udp_nocgo.go"); fi
key=$(printf '%s\n' "$format" "$pkg" "$ld" "$cgo" "$stub" | sha256sum | cut -c1-12)
out="$cache/flannel/$bin-$version-$gover-$key"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/$bin" ]; then
  echo "$out/$bin"
  exit 0
fi

# A throwaway module that requires only the tool, so that the tool's own go.mod decides every
# dependency version (neither module has replace directives that a require would lose).
src="$out/src"
mkdir -p "$src"
if [ ! -f "$src/go.mod" ]; then
  printf 'module slipway.local/%sbuild\n\ngo 1.24\n' "$bin" >"$src/go.mod.tmp"
  mv "$src/go.mod.tmp" "$src/go.mod"
  if ! (cd "$src" && go get "$module@$version" >&2); then
    rm -f "$src/go.mod"
    exit 1
  fi
fi
if [ "$what" = flanneld ] && [ "$cgo" = 0 ] && [ ! -d "$src/flannel" ]; then
  # `go build -overlay` may not touch files in the module cache, so build a copy of the module
  # with the stub added, through a replace directive.
  dir=$(cd "$src" && go list -m -f '{{.Dir}}' "$module")
  rm -rf "$src/flannel.tmp"
  cp -r "$dir" "$src/flannel.tmp"
  chmod -R u+w "$src/flannel.tmp"
  cp "$here/_flannel/udp_nocgo.go" "$src/flannel.tmp/pkg/backend/udp/udp_nocgo.go"
  (cd "$src" && go mod edit -replace "$module=./flannel")
  mv "$src/flannel.tmp" "$src/flannel"
fi
echo "building $bin $version with CGO_ENABLED=$cgo (cold: about $cold on 2 cores)" >&2
(cd "$src" && CGO_ENABLED=$cgo go build -trimpath -ldflags "$ld" -o "$out/$bin.tmp" "$pkg")
mv "$out/$bin.tmp" "$out/$bin"
echo "$out/$bin"
