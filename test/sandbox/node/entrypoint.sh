#!/bin/sh
# PID 1 of a sandbox host until it execs systemd. It makes a Docker container look enough like a
# machine for systemd, containerd and the kubelet: writable cgroups, shared mount propagation, an
# identity of its own, and a resolver file that is not Docker's loopback DNS.
set -eu

# cgroup v1 (or hybrid): Docker mounts the hierarchies read-only unless the container is privileged.
if [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
  # A plain remount reports "busy" on the hierarchies; changing the per-mount flag works.
  mount -o remount,rw /sys/fs/cgroup
  for d in /sys/fs/cgroup/*; do
    if mountpoint -q "$d"; then mount -o remount,bind,rw "$d"; fi
  done
  # Controllers the host never mounted show hierarchy 0 in /proc/cgroups. If systemd sees them
  # it mounts them itself, at the root of the host's hierarchy, and cgroups leak out of the host.
  awk 'NR == 1 || $2 != 0' /proc/cgroups >/run/sandbox-cgroups
  mount --bind /run/sandbox-cgroups /proc/cgroups
fi

# Pods mount volumes with propagation; kubelet needs / to be shared.
mount --make-rshared /

# Docker points resolv.conf at 127.0.0.11, which is loopback inside a pod: CoreDNS would forward to
# itself. This file names a server on the sandbox network for the kubelet's resolvConf.
if [ -n "${SANDBOX_DNS:-}" ]; then
  printf 'nameserver %s\n' "$SANDBOX_DNS" >/etc/resolv.upstream.conf
fi

# Each host needs its own identity. The sandbox usually copies these in before start.
if [ ! -s /etc/machine-id ]; then
  tr -d '-' </proc/sys/kernel/random/uuid >/etc/machine-id
fi
# A cloud server (booted with a config drive, below) gets them from cloud-init, as a cloud image
# does; making them here as well would cost every boot a second RSA key.
if [ ! -d /var/lib/cloud/seed/config_drive ] && ! ls /etc/ssh/ssh_host_*_key >/dev/null 2>&1; then
  ssh-keygen -A >/dev/null
fi

# A cloud server's interfaces carry the MAC addresses of their Neutron ports, as a hypervisor
# gives them; cloud-init matches the config drive's network_data.json by MAC. Given as IP=MAC.
for pair in ${SANDBOX_MACS:-}; do
  dev=$(ip -o -4 addr show | awk -v ip="${pair%%=*}" '{split($4, a, "/"); if (a[1] == ip) print $2}')
  [ -n "$dev" ] || continue
  # Announce the new address (gratuitous ARP), or neighbours keep the one Docker gave.
  echo 1 >"/proc/sys/net/ipv4/conf/$dev/arp_notify"
  ip link set dev "$dev" address "${pair#*=}"
done

# Only cloud servers (of the OpenStack simulator) boot with a config drive; cloud-init runs only there.
if [ -d /var/lib/cloud/seed/config_drive ]; then
  rm -f /etc/cloud/cloud-init.disabled
else
  : >/etc/cloud/cloud-init.disabled
fi

# The kubelet's root directory must sit on a file system that its cadvisor can describe: from
# v1.36 on the kubelet stops at start ("failed to get rootfs info") when it is Docker's
# fuse-overlayfs, the storage driver on some machines. Keep it on the host's containerd volume.
if [ "$(findmnt -no FSTYPE /)" = fuse.fuse-overlayfs ] && [ -d /var/lib/containerd ] && ! mountpoint -q /var/lib/kubelet; then
  mkdir -p /var/lib/containerd/.sandbox-kubelet /var/lib/kubelet
  mount --bind /var/lib/containerd/.sandbox-kubelet /var/lib/kubelet
  mount --make-rshared /var/lib/kubelet
fi

# Without CAP_SYS_RESOURCE no process may lower its oom_score_adj, and runc fails every pod
# sandbox. Put a wrapper first on PATH that clamps negative values; only where it is needed.
capeff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
if [ $(( 0x$capeff >> 24 & 1 )) -eq 0 ]; then
  ln -sf /usr/local/lib/sandbox/runc-wrapper /usr/local/sbin/runc
else
  rm -f /usr/local/sbin/runc
fi

exec "$@"
