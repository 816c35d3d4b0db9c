#!/usr/bin/env bash
# Builds the node-side tools that kubeadm clusters need besides Kubernetes itself, from the Go
# module proxy (or this repository, for pause), into a cache keyed by tool, version and Go
# toolchain. Concurrent calls for one tool wait for each other.
#
# usage: test/kube/tools.sh coredns vX.Y.Z | crictl vX.Y.Z | containerd vX.Y.Z | pause
# prints the path of the built binary on stdout; for containerd, the directory holding bin/containerd,
# bin/containerd-shim-runc-v2 and bin/ctr, laid out like containerd's release tarballs.
set -euo pipefail

tool=${1:?usage: tools.sh coredns|crictl VERSION, or tools.sh pause}
version=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local

case "$tool" in
  coredns) module=github.com/coredns/coredns; pkg=$module ;;
  crictl) module=sigs.k8s.io/cri-tools; pkg=$module/cmd/crictl ;;
  containerd) module=github.com/containerd/containerd/v2; pkg=$module ;;
  pause)
    # Our own program: key it by its source instead of a version.
    version=src-$(cat "$here/pause/main.go" | sha256sum | cut -c1-12) ;;
  *) echo "tools.sh: unknown tool $tool" >&2; exit 2 ;;
esac
case "$version" in v[0-9]*.*.* | src-*) ;; *) echo "tools.sh: $tool needs a version like v1.2.3, got '$version'" >&2; exit 2 ;; esac

out="$cache/$tool/$version-$gover"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ "$tool" = containerd ]; then
  # Three binaries: the marker of a finished build is the directory bin/ itself, renamed into place.
  if [ -d "$out/bin" ]; then
    echo "$out"
    exit 0
  fi
elif [ -x "$out/$tool" ]; then
  echo "$out/$tool"
  exit 0
fi

if [ "$tool" = pause ]; then
  (cd "$here/pause" && go build -trimpath -ldflags "-s -w" -o "$out/pause.tmp" .)
else
  # A throwaway module that requires the tool, so that its own go.mod (replace directives
  # aside) pins the dependencies; `go install pkg@version` would do the same without the cache dir.
  src="$out/src"
  mkdir -p "$src"
  if [ ! -f "$src/go.mod" ]; then
    printf 'module slipway.local/%sbuild\n\ngo 1.24\n' "$tool" >"$src/go.mod.tmp"
    mv "$src/go.mod.tmp" "$src/go.mod"
    (cd "$src" && go get "$module@$version" >&2)
  fi
  ld="-s -w"
  if [ "$tool" = crictl ]; then ld="$ld -X sigs.k8s.io/cri-tools/pkg/version.Version=${version#v}"; fi
  if [ "$tool" = containerd ]; then
    # Static without cgo: the btrfs snapshotter is the one built-in plugin that needs cgo.
    # The version package is what `containerd --version` prints and slipway's probe reads.
    ld="$ld -X $module/version.Version=$version"
    echo "building containerd $version: containerd, containerd-shim-runc-v2, ctr (cold: about 4 minutes)" >&2
    rm -rf "$out/bin.tmp"
    for cmd in containerd containerd-shim-runc-v2 ctr; do
      (cd "$src" && go build -trimpath -tags no_btrfs -ldflags "$ld" -o "$out/bin.tmp/$cmd" "$pkg/cmd/$cmd")
    done
    mv "$out/bin.tmp" "$out/bin"
    echo "$out"
    exit 0
  fi
  echo "building $tool $version (cold: coredns about 3 minutes, crictl about 1)" >&2
  (cd "$src" && go build -trimpath -ldflags "$ld" -o "$out/$tool.tmp" "$pkg")
fi
mv "$out/$tool.tmp" "$out/$tool"
echo "$out/$tool"
