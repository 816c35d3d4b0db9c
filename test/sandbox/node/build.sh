#!/usr/bin/env bash
# Builds the sandbox node image: a Debian bookworm rootfs from debootstrap (cached as a tarball,
# keyed by the package list) plus the files in this directory (keyed by their content), loaded into
# the running Docker daemon. Prints the image reference on stdout.
#
# usage: test/sandbox/node/build.sh            prints the image reference
#        test/sandbox/node/build.sh --rootfs   prints the path of the rootfs tarball only
# env:   SLIPWAY_CACHE (default ~/.cache/slipway), DEBIAN_MIRROR (default http://deb.debian.org/debian)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm

pkgs=$(grep -v '^#' "$here/packages.txt" | xargs | tr ' ' ',')
rootfs_key=$(printf '%s\n' "rootfs-v1" "$suite" "$pkgs" | sha256sum | cut -c1-16)
image_key=$(cat <(echo "$rootfs_key") "$here/build.sh" "$here/Dockerfile" "$here/entrypoint.sh" "$here/runc-wrapper.sh" "$here/cloud.cfg" | sha256sum | cut -c1-16)
image="slipway-sandbox-node:$image_key"

dir="$cache/node/$rootfs_key"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

if [ "${1:-}" != --rootfs ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "$image"
  exit 0
fi

if [ ! -s "$dir/rootfs.tar" ]; then
  command -v debootstrap >/dev/null || { echo "node/build.sh: debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
  root="$dir/rootfs"
  rm -rf "$root"
  echo "node image: debootstrap $suite (about a minute)" >&2
  debootstrap --variant=minbase --include="$pkgs" "$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 \
    || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
  # Identity must be per host: the entrypoint or the sandbox creates these at first start.
  rm -f "$root"/etc/ssh/ssh_host_* "$root/var/lib/dbus/machine-id"
  : >"$root/etc/machine-id"
  # Hosts have no Debian mirror on the internal sandbox network; apt sees only the repos slipway adds.
  : >"$root/etc/apt/sources.list"
  rm -f "$root"/etc/apt/sources.list.d/*
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -cf "$dir/rootfs.tar.tmp" .
  mv "$dir/rootfs.tar.tmp" "$dir/rootfs.tar"
  rm -rf "$root"
fi

if [ "${1:-}" = --rootfs ]; then
  echo "$dir/rootfs.tar"
  exit 0
fi

base="slipway-sandbox-rootfs:$rootfs_key"
if ! docker image inspect "$base" >/dev/null 2>&1; then
  docker import --change 'LABEL dev.slipway.sandbox.image=rootfs' "$dir/rootfs.tar" "$base" >/dev/null
fi
DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base" -t "$image" "$here" >"$dir/build.log" 2>&1 \
  || { tail -20 "$dir/build.log" >&2; exit 1; }
echo "$image"
