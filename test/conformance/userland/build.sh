#!/usr/bin/env bash
# Builds the conformance images' userland: a Debian bookworm root filesystem from debootstrap
# (minbase plus packages.txt), stripped of documentation and package caches, cached as a tarball
# keyed by the package list. test/conformance/image puts agnhost on it, makes the glibc-dns-testing
# image of it, and takes the busybox image's binary from it.
#
# usage: test/conformance/userland/build.sh     prints the path of the rootfs tarball
# env:   SLIPWAY_CACHE (default ~/.cache/slipway), DEBIAN_MIRROR (default http://deb.debian.org/debian)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${SLIPWAY_CACHE:-$HOME/.cache/slipway}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm

pkgs=$(grep -v '^#' "$here/packages.txt" | xargs | tr ' ' ',')
key=$(printf '%s\n' "userland-v1" "$suite" "$pkgs" | sha256sum | cut -c1-16)
dir="$cache/conformance/userland/$key"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

if [ ! -s "$dir/rootfs.tar" ]; then
  command -v debootstrap >/dev/null || { echo "userland/build.sh: debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
  root="$dir/rootfs"
  rm -rf "$root"
  echo "conformance userland: debootstrap $suite (about a minute)" >&2
  debootstrap --variant=minbase --include="$pkgs" "$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 \
    || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
  # What no test reads: documentation, locales, package caches and lists, logs.
  # Log files go, their directories stay (nginx opens /var/log/nginx/error.log before its config).
  rm -rf "$root"/usr/share/{doc,man,info,locale}/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/*
  find "$root/var/log" -type f -delete
  : >"$root/etc/apt/sources.list"
  tar -C "$root" --numeric-owner -cf "$dir/rootfs.tar.tmp" .
  mv "$dir/rootfs.tar.tmp" "$dir/rootfs.tar"
  rm -rf "$root"
fi
echo "$dir/rootfs.tar"
