#!/usr/bin/env bash
# Builds versitygw, an S3-compatible object store server that keeps objects as files in a
# directory (Apache-2.0, github.com/versity/versitygw), from the Go module proxy into a cache keyed
# by version and Go toolchain. The tests of etcd.snapshots.s3 upload snapshots to it with the
# same curl commands the control planes run. Concurrent calls wait for each other.
#
# usage: test/s3/build.sh [vX.Y.Z]   (default v1.8.0)
# env:   SLIPWAY_CACHE (default ~/.cache/slipway)
# prints the path of the versitygw binary on stdout.
set -euo pipefail

version=${1:-v1.8.0}
case "$version" in v[0-9]*.*.*) ;; *) echo "s3/build.sh: version must look like v1.8.0, got $version" >&2; exit 2 ;; esac
module=github.com/versity/versitygw

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
out="$cache/s3/$version-$(go env GOVERSION)"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
if [ -x "$out/versitygw" ]; then
  echo "$out/versitygw"
  exit 0
fi
export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
echo "building versitygw $version (cold: a few minutes)" >&2
tmp=$(mktemp -d "$out/.bin.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "$module/cmd/versitygw@$version"
mv "$tmp/versitygw" "$out/versitygw"
echo "$out/versitygw"
