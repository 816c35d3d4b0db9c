#!/usr/bin/env bash
# Builds terraform-provider-openstack from the Go module proxy into a cache keyed by version and Go
# toolchain, so that the Terraform tests and CI share one build, and Terraform uses it through
# dev_overrides with no registry access.
#
# usage: test/terraform/provider.sh [version]           prints the directory holding the provider
#        test/terraform/provider.sh --cli-config FILE [version]
#                                   also writes a Terraform CLI config whose dev_overrides use it
# env:   SLIPWAY_CACHE (default ~/.cache/slipway)
set -euo pipefail

config=""
if [ "${1:-}" = --cli-config ]; then
  config=${2:?usage: provider.sh --cli-config FILE [version]}
  shift 2
fi
# The default is the release terraform/openstack is tested with (test/terraform).
version=${1:-v3.4.0}
case "$version" in v3.*.*) ;; *) echo "provider.sh: version must look like v3.4.0, got $version" >&2; exit 2 ;; esac
module=github.com/terraform-provider-openstack/terraform-provider-openstack/v3

cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
gover=$(go env GOVERSION)
out="$cache/terraform-provider-openstack/$version-$gover"
mkdir -p "$out"
# One build per version at a time: a test and CI may ask at once.
exec 9>"$out/.lock"
flock 9

if [ ! -x "$out/bin/terraform-provider-openstack" ]; then
  export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local
  rm -rf "$out/bin.tmp"
  echo "building terraform-provider-openstack $version (cold: about 2 minutes, downloads included)" >&2
  # The binary is stripped (-s -w), so the compiler need not emit DWARF either.
  GOBIN="$out/bin.tmp" go install -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w" "$module@$version"
  # Terraform finds a dev_overrides provider by this name in the directory.
  rm -rf "$out/bin"
  mv "$out/bin.tmp" "$out/bin"
fi

if [ -n "$config" ]; then
  # Terraform's CLI config syntax is HCL: the directory is quoted and must not break the string.
  case "$out/bin" in *'"'* | *'\'* | *'$'*) echo "provider.sh: cache path $out/bin cannot be written into HCL" >&2; exit 2 ;; esac
  cat >"$config.tmp" <<HCL
provider_installation {
  dev_overrides {
    "terraform-provider-openstack/openstack" = "$out/bin"
  }
  direct {}
}
HCL
  mv "$config.tmp" "$config"
fi
echo "$out/bin"
