#!/usr/bin/env bash
# Builds versitygw, an S3-compatible object store server that keeps objects as files in a
# directory (Apache-2.0, github.com/versity/versitygw), from the module in test/s3/versitygw:
# its go.mod names the version and every module it builds with, and its go.sum, committed in this
# repository, their hashes. The Go module proxy serves the source; go refuses any module whose
# content differs from go.sum (-mod=readonly, as test/ccm/build.sh builds the CCM). It is cached
# by version, Go toolchain and the hash of go.mod and go.sum. The tests of etcd.snapshots.s3
# upload snapshots to it with the same curl commands the control planes run. Concurrent calls
# wait for each other.
#
# usage: test/s3/build.sh
# env:   SLIPWAY_CACHE (default ~/.cache/slipway),
#        SLIPWAY_S3_MODULE (default test/s3/versitygw: the module with go.mod and go.sum; tests
#        point it at a tampered copy)
# prints the path of the versitygw binary on stdout.
set -euo pipefail

module=github.com/versity/versitygw
src=$(cd "${SLIPWAY_S3_MODULE:-$(dirname "$0")/versitygw}" && pwd)
version=$(awk -v m="$module" '$1 == m {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$src/go.mod")
case "$version" in v[0-9]*.*.*) ;; *) echo "s3/build.sh: $src/go.mod does not require $module" >&2; exit 2 ;; esac

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
sums=$(cat "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-12)
out="$cache/s3/$version-$(go env GOVERSION)-$sums"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/versitygw" ]; then
  echo "$out/versitygw"
  exit 0
fi
export GOFLAGS=-mod=readonly GOSUMDB=off GONOSUMDB= GOPRIVATE= GONOPROXY= GOINSECURE= GOWORK=off
export CGO_ENABLED=0 GOTOOLCHAIN=local
echo "building versitygw $version (cold: a few minutes)" >&2
tmp=$(mktemp -d "$out/.bin.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$src" && go build -trimpath -ldflags "-s -w" -o "$tmp/versitygw" "$module/cmd/versitygw")
mv "$tmp/versitygw" "$out/versitygw"
echo "$out/versitygw"
