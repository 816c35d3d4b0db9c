#!/usr/bin/env bash
# Builds the OpenStack cloud-controller-manager (openstack-cloud-controller-manager from
# k8s.io/cloud-provider-openstack) as a static linux/amd64 binary, from the module in build/ccm:
# its go.mod names the CCM's version and every module it builds with, and its go.sum, committed
# in this repository, their hashes. The Go module proxy serves the source; go refuses any module
# whose content differs from go.sum (-mod=readonly: go.mod and go.sum cannot change during the
# build, so a missing or different hash is an error, never a new line in go.sum). The checksum
# database is not consulted (GOSUMDB=off): go.sum alone says what the CCM is. The tests run the
# binary as a process, and the same binary goes into the image that clusters deploy. It is cached
# by version, Go toolchain and the hash of go.mod and go.sum. Concurrent calls wait for each other.
#
# usage: test/ccm/build.sh [vX.Y.Z]   (the version build/ccm/go.mod requires; another is refused)
# env:   SLIPWAY_CACHE (default ~/.cache/slipway)
#        SLIPWAY_CCM_MODULE, a directory that replaces build/ccm (for the tests of this script)
# prints the directory holding openstack-cloud-controller-manager on stdout.
set -euo pipefail

module=k8s.io/cloud-provider-openstack
bin=openstack-cloud-controller-manager
src=${SLIPWAY_CCM_MODULE:-$(cd "$(dirname "$0")/../../build/ccm" && pwd)}
for f in go.mod go.sum; do
  [ -f "$src/$f" ] || { echo "ccm/build.sh: $src/$f is missing" >&2; exit 2; }
done
version=$(awk -v m="$module" '$1 == m {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$src/go.mod")
case "$version" in v[0-9]*.*.*) ;; *) echo "ccm/build.sh: $src/go.mod does not require $module" >&2; exit 2 ;; esac
if [ -n "${1:-}" ] && [ "$1" != "$version" ]; then
  echo "ccm/build.sh: asked for $module $1, but $src/go.mod requires $version: change the version there (and go mod tidy)" >&2
  exit 2
fi

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
sums=$(cat "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-12)
out="$cache/ccm/$version-$gover-$sums"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/bin/$bin" ]; then
  echo "$out/bin"
  exit 0
fi

# Whatever the caller's environment says: only go.sum decides, nothing in it may change, and no
# workspace or private-module setting steers what is fetched.
export GOFLAGS=-mod=readonly GOSUMDB=off GONOSUMDB= GOPRIVATE= GONOPROXY= GOINSECURE= GOWORK=off
export CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOTOOLCHAIN=local

# The CCM reports its version in two places: --version (component-base) and its user agent.
ld="-s -w -X k8s.io/component-base/version.gitVersion=$version -X $module/pkg/version.Version=$version"
echo "building $bin $version (cold: several minutes)" >&2
mkdir -p "$out/bin"
(cd "$src" && go build -trimpath -gcflags=all=-dwarf=false -ldflags "$ld" -o "$out/bin/$bin.tmp" "$module/cmd/$bin")
mv "$out/bin/$bin.tmp" "$out/bin/$bin"
echo "$out/bin"
