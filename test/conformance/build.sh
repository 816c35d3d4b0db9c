#!/usr/bin/env bash
# Builds the Kubernetes conformance suite for one release from the Go module proxy, cached by
# version and Go toolchain like test/kube/build.sh's binaries: e2e.test (the suite), ginkgo (its
# runner, for parallel runs; the version k8s.io/kubernetes pins) and agnhost (the suite's
# all-purpose test image), then the images the suite's tests run that slipway builds rather than
# pulls (test/conformance/image): agnhost, busybox and glibc-dns-testing, on a Debian userland
# (test/conformance/userland, debootstrap, cached).
#
# usage: test/conformance/build.sh <kubernetes-version>
# env:   SLIPWAY_CACHE (default ~/.cache/slipway), CONFORMANCE_REGISTRY (where the suite is to
#        look for agnhost, the override's promoterE2eRegistry; default upstream's, see the README)
# prints the bin directory on stdout; the image and the suite's override are in ../images beside it.
set -euo pipefail

version=${1:?usage: build.sh vX.Y.Z}
case "$version" in v1.*.*) ;; *) echo "build.sh: version must look like v1.36.3, got $version" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=test/kube/workmod.sh
. "$here/../kube/workmod.sh"

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
out="$cache/conformance/$version-$gover"
bin="$out/bin"
mkdir -p "$bin"
# One build per version at a time: a later `make conformance` may ask while CI builds.
exec 9>"$out/.lock"
flock 9

export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOTOOLCHAIN=local

# Its own work module (the same go.mod as test/kube/build.sh's): the suite's dependencies are
# added to it as it builds, which must not race with a kubeadm build holding the other lock.
work="$out/src"
kube_workmod "$work" "$version"
ld=$(kube_ldflags "$version")
src=$(cd "$work" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
# Same flags as test/kube/build.sh, so that packages both build come from Go's build cache.
flags=(-trimpath -gcflags=all=-dwarf=false)

if [ ! -x "$bin/e2e.test" ]; then
  echo "building e2e.test $version (cold: 15 minutes or more on 2 cores)" >&2
  (cd "$work" && nice -n 19 go test -c -vet=off "${flags[@]}" -ldflags "$ld" -o "$bin/e2e.test.tmp" k8s.io/kubernetes/test/e2e)
  mv "$bin/e2e.test.tmp" "$bin/e2e.test"
fi

if [ ! -x "$bin/agnhost" ] || [ ! -x "$bin/ginkgo" ] || [ ! -x "$bin/nnp" ] || [ ! -x "$bin/sample-apiserver" ]; then
  # agnhost reports the tag its image carries (its Makefile links VERSION in the same way).
  agnver=$(tr -d '[:space:]' <"$src/test/images/agnhost/VERSION")
  echo "building agnhost $agnver, ginkgo, nnp and sample-apiserver" >&2
  (cd "$work" && nice -n 19 go build "${flags[@]}" -ldflags "-s -w -X main.Version=$agnver" -o "$bin/agnhost" k8s.io/kubernetes/test/images/agnhost)
  (cd "$work" && nice -n 19 go build "${flags[@]}" -ldflags "-s -w" -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
  # nnp: the nonewprivs image's program (prints its effective uid).
  (cd "$work" && nice -n 19 go build "${flags[@]}" -ldflags "-s -w" -o "$bin/nnp" k8s.io/kubernetes/test/images/nonewprivs)
  # sample-apiserver: the aggregator spec's extension API server, the main package of the
  # staging module k8s.io/sample-apiserver at the release's v0.X.Y (the work module's replace).
  (cd "$work" && nice -n 19 go build "${flags[@]}" -ldflags "-s -w" -o "$bin/sample-apiserver" k8s.io/sample-apiserver)
fi

"$bin/e2e.test" --help >/dev/null 2>&1 || { echo "build.sh: $bin/e2e.test --help fails" >&2; exit 1; }

# The image is assembled every time (seconds): it also follows changes to its code in this tree.
# Its command checks that e2e.test, under the override it writes, names the image it built.
registry=()
[ -z "${CONFORMANCE_REGISTRY:-}" ] || registry=(-registry "$CONFORMANCE_REGISTRY")
userland=$("$here/userland/build.sh")
(cd "$root" && GOFLAGS= go run ./test/conformance/image -bin "$bin" -kubernetes "$src" -userland "$userland" -out "$out/images" "${registry[@]}") >&2
echo "$bin"
