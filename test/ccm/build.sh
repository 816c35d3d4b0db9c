#!/usr/bin/env bash
# Builds the OpenStack cloud-controller-manager (openstack-cloud-controller-manager from
# k8s.io/cloud-provider-openstack) from the Go module proxy into a cache keyed by version and Go
# toolchain, as a static linux/amd64 binary: the tests run it as a process, and the same binary
# goes into the image that clusters deploy. Concurrent calls wait for each other.
#
# usage: test/ccm/build.sh [vX.Y.Z]   (default v1.34.1)
# env:   SLIPWAY_CACHE (default ~/.cache/slipway)
# prints the directory holding openstack-cloud-controller-manager on stdout.
set -euo pipefail

version=${1:-v1.34.1}
case "$version" in v[0-9]*.*.*) ;; *) echo "ccm/build.sh: version must look like v1.34.1, got $version" >&2; exit 2 ;; esac
module=k8s.io/cloud-provider-openstack
bin=openstack-cloud-controller-manager

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
out="$cache/ccm/$version-$gover"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/bin/$bin" ]; then
  echo "$out/bin"
  exit 0
fi

export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOTOOLCHAIN=local

# A throwaway module that requires the CCM. Replace directives apply only in the main module, so
# it repeats the ones the CCM builds with: every Kubernetes staging module at the version that
# matches the k8s.io/kubernetes the CCM requires (k8s.io/kubernetes itself asks for v0.0.0).
src="$out/src"
mkdir -p "$src"
if [ ! -f "$src/go.mod" ]; then
  ccmmod=$(cd "$src" && go mod download -json "$module@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  kube=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2; exit}' "$ccmmod")
  [ -n "$kube" ] || { echo "ccm/build.sh: $module@$version does not require k8s.io/kubernetes" >&2; exit 1; }
  kubemod=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$kube" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  minor=${kube#v1.}; minor=${minor%%.*}
  staging="v0.$minor.${kube##*.}"
  {
    printf 'module slipway.local/ccmbuild\n\ngo 1.25\n\nrequire %s %s\n\n' "$module" "$version"
    grep -E '^\s*k8s.io/[a-z0-9-]+ => \./staging/' "$kubemod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
  } >"$src/go.mod.tmp"
  mv "$src/go.mod.tmp" "$src/go.mod"
fi

# The CCM reports its version in two places: --version (component-base) and its user agent.
ld="-s -w -X k8s.io/component-base/version.gitVersion=$version -X $module/pkg/version.Version=$version"
echo "building $bin $version (cold: several minutes)" >&2
mkdir -p "$out/bin"
(cd "$src" && go build -trimpath -gcflags=all=-dwarf=false -ldflags "$ld" -o "$out/bin/$bin.tmp" "$module/cmd/$bin")
mv "$out/bin/$bin.tmp" "$out/bin/$bin"
echo "$out/bin"
