{{- template "proxy" .Proxy}}
# The CNI reference plugins come from kubernetes-cni (already in /opt/cni/bin) or the
# distribution's package, which installs them elsewhere.
cni_source() {
  local d
  for d in /opt/cni/bin /usr/lib/cni /usr/libexec/cni; do
    if [ -x "$d/loopback" ] && [ -x "$d/bridge" ] && [ -x "$d/host-local" ] && [ -x "$d/portmap" ]; then
      echo "$d"
      return 0
    fi
  done
}

{{- if eq .Family "debian"}}
{{- template "dpkg-recover"}}
{{- end}}

# Packages: only what is missing, so that a converged host never talks to a mirror.
missing=()
{{- range .Tools}}
command -v {{q .Command}} >/dev/null || missing+=({{q .Package}})
{{- end}}
{{- if ne .Family "flatcar"}}
[ -n "$(cni_source)" ] || missing+=(containernetworking-plugins)
{{- end}}
if [ "${#missing[@]}" -gt 0 ]; then
{{- if eq .Family "debian"}}
  export DEBIAN_FRONTEND=noninteractive
  quiet apt-get update
  quiet apt-get install -y --no-install-recommends "${missing[@]}"
{{- else if eq .Family "rhel"}}
  # containerd.io comes from Docker's repository, which must be configured on the host.
  quiet dnf install -y "${missing[@]}"
{{- end}}
  changed "installed ${missing[*]}"
fi

# containerd: a host keeps its own when it is at least the version's minimum; otherwise it gets
# containerd's release (binaries in /usr/local/bin, slipway's unit). Distributions append their
# revision to the version ("1.6.20~ds1"): only the leading numbers are compared.
containerd_want={{q .Containerd.Version}}
containerd_min={{q .Containerd.Minimum}}
containerd_have=$(containerd --version 2>/dev/null | awk '{print $3}') || true
containerd_num=$(printf '%s\n' "${containerd_have#v}" | grep -oE '^[0-9]+\.[0-9]+(\.[0-9]+)?' || true)
version_below() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }
if [ -z "$containerd_num" ] || version_below "$containerd_num" "$containerd_min"; then
{{- if eq .Family "flatcar"}}
  fail "containerd ${containerd_have:-is missing}: Kubernetes needs at least $containerd_min, and Flatcar ships containerd with the OS image: use a newer Flatcar release"
{{- else}}
  if [ -f /etc/kubernetes/kubelet.conf ] && [ "${SLIPWAY_NODE_DRAINED:-}" != 1 ]; then
    fail "containerd $containerd_have is older than $containerd_min on a node that has joined the cluster: apply replaces it in its containerd step, with the node drained first"
  fi
  case "$(uname -m)" in
    x86_64) containerd_arch=amd64 ;;
    aarch64) containerd_arch=arm64 ;;
    *) fail "no containerd release for architecture $(uname -m)" ;;
  esac
  tarball="containerd-${containerd_want}-linux-${containerd_arch}.tar.gz"
  tmp=$(mktemp -d)
{{- if .Containerd.Upload}}
  # assets.upload: apply has uploaded the release from the operator's directory.
  url={{q .Containerd.Upload}}"/${tarball}"
  [ -f "$url" ] || { rm -rf "$tmp"; fail "$url is missing: put $tarball in assets.upload.directory, and apply uploads it"; }
  cp "$url" "$tmp/$tarball"
  sum=
  if [ -f "$url.sha256sum" ]; then sum=$(awk '{print $1}' "$url.sha256sum"); [ -n "$sum" ] || sum=empty; fi
  if [ -n "$sum" ] && [ "$(sha256sum "$tmp/$tarball" | awk '{print $1}')" != "$sum" ]; then
{{- else}}
  url={{q .Containerd.Releases}}"/v${containerd_want}/${tarball}"
  quiet curl -fsSL --proto {{q .Containerd.CurlProto}} --retry 3 -o "$tmp/$tarball" "$url" || { rm -rf "$tmp"; fail "could not download $url"; }
  sum=$(curl -fsSL --proto {{q .Containerd.CurlProto}} --retry 3 "$url.sha256sum" | awk '{print $1}') || { rm -rf "$tmp"; fail "could not download $url.sha256sum"; }
  if [ -z "$sum" ] || [ "$(sha256sum "$tmp/$tarball" | awk '{print $1}')" != "$sum" ]; then
{{- end}}
    rm -rf "$tmp"
    fail "$url does not match its sha256 checksum in $url.sha256sum"
  fi
  if active containerd; then quiet systemctl stop containerd; fi
  quiet tar -C /usr/local --no-same-owner -xzf "$tmp/$tarball" bin/
  rm -rf "$tmp"
  {{file "/etc/systemd/system/containerd.service" "0644" .Containerd.Unit ""}}
  quiet systemctl daemon-reload
  hash -r
  changed "installed containerd $containerd_want from its release{{if .Containerd.Upload}}, uploaded{{end}} (had ${containerd_have:-none})"
{{- end}}
fi
containerd_major=$(containerd --version 2>/dev/null | awk '{print $3}' | sed -E 's/^v//; s/\..*//')
{{- if eq .Family "rhel"}}

# SELinux in enforcing mode blocks the control plane's host-path volumes; kubeadm's own
# instructions set it permissive.
if command -v getenforce >/dev/null && [ "$(getenforce)" = Enforcing ]; then
  quiet setenforce 0
  sed -i 's/^SELINUX=enforcing$/SELINUX=permissive/' /etc/selinux/config
  changed "set SELinux to permissive"
fi
{{- end}}

# kubeadm configurations hold bootstrap tokens and certificate keys, and live only while
# kubeadm runs: these were left by a run that was killed, or by an older slipway.
for f in {{q .KubeadmConfigDir}}/*.yaml; do
  remove_path "$f"
done

# Swap: the kubelet refuses to run with swap on.
if [ "$(awk 'NR > 1' /proc/swaps | wc -l)" -gt 0 ]; then
  quiet swapoff -a
  changed "turned swap off"
fi
swap_line='^[^#[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+swap[[:space:]]'
if [ -f /etc/fstab ] && grep -Eq "$swap_line" /etc/fstab; then
  sed -i -E "s/($swap_line.*)\$/# \\1 # swap disabled by slipway for the kubelet/" /etc/fstab
  changed "disabled swap in /etc/fstab"
fi

# Kernel modules. Built-in ones need no loading: overlay shows in /proc/filesystems and
# br_netfilter by its sysctls, others in /sys/module or modules.builtin.
module_ready() {
  case "$1" in
    overlay) grep -qw overlay /proc/filesystems ;;
    br_netfilter) [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] ;;
    *) [ -d "/sys/module/$1" ] || grep -q "/$1\.ko" "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null ;;
  esac
}
load_at_boot=""
for m in {{qs .Modules}}; do
  if ! module_ready "$m"; then
    quiet modprobe "$m" || fail "kernel module $m is neither built in nor loadable"
    changed "loaded kernel module $m"
  fi
  if modinfo -F filename "$m" 2>/dev/null | grep -q '\.ko'; then load_at_boot+="$m"$'\n'; fi
done
if [ -n "$load_at_boot" ]; then
  printf '%s' "$load_at_boot" | put_file /etc/modules-load.d/slipway.conf 0644
else
  remove_path /etc/modules-load.d/slipway.conf
fi

# Sysctls, at boot and now (only those that differ).
sysctls=({{qs .Sysctls}})
printf '%s\n' "# Written by slipway: forwarding and bridged traffic through iptables, for pod networking." "${sysctls[@]}" |
  put_file /etc/sysctl.d/99-slipway.conf 0644
for kv in "${sysctls[@]}"; do
  if [ "$(sysctl -n "${kv%%=*}" 2>/dev/null)" != "${kv#*=}" ]; then
    quiet sysctl -w "$kv"
    changed "set $kv"
  fi
done

# CNI plugins in /opt/cni/bin, where containerd looks for them.
src=$(cni_source)
[ -n "$src" ] || fail "no CNI reference plugins (loopback, bridge, host-local, portmap) found in /opt/cni/bin, /usr/lib/cni or /usr/libexec/cni"
if [ "$src" != /opt/cni/bin ]; then
  mkdir -p /opt/cni/bin
  for p in "$src"/*; do
    if [ ! -e "/opt/cni/bin/${p##*/}" ]; then ln -s "$p" "/opt/cni/bin/${p##*/}"; fi
  done
  changed "linked the CNI plugins in $src into /opt/cni/bin"
fi

# containerd: configuration, registries, proxy. Only a changed config.toml or unit drop-in
# restarts it; hosts.toml and CA files are read at every pull.
restart_containerd=0
reload_units=0
if [ "${containerd_major:-1}" -ge 2 ] 2>/dev/null; then
{{filewith "/etc/containerd/config.toml" .ContainerdMode .ContainerdV3 .ContainerdAuthV3 "restart_containerd"}}
else
{{filewith "/etc/containerd/config.toml" .ContainerdMode .ContainerdConfig .ContainerdAuthV2 "restart_containerd"}}
fi
{{- range .Registries}}
{{- if .CA}}
{{file .CAPath "0644" .CA ""}}
{{- end}}
{{file (printf "/etc/containerd/certs.d/%s/hosts.toml" .Dir) "0644" .HostsTOML ""}}
{{- end}}
registry_dirs=({{qs .RegistryDirs}})
for f in /etc/containerd/certs.d/*/hosts.toml; do
  [ -f "$f" ] && head -n 1 "$f" | grep -q '^# Managed by slipway' || continue
  dir=${f%/hosts.toml}
  keep=0
  for d in ${registry_dirs[@]+"${registry_dirs[@]}"}; do [ "${dir##*/}" != "$d" ] || keep=1; done
  [ "$keep" = 1 ] || remove_path "$dir"
done
proxy_dropin=/etc/systemd/system/containerd.service.d/http-proxy.conf
{{- if .ProxyDropIn}}
# The proxy's values (credentials perhaps) in a root-only file, which the drop-in names.
{{filewith .ProxyEnvFile "0600" .ProxyEnv .ProxyEnvFrom "reload_units"}}
{{file "/etc/systemd/system/containerd.service.d/http-proxy.conf" "0644" .ProxyDropIn "reload_units"}}
{{- else}}
if [ -f "$proxy_dropin" ] && head -n 1 "$proxy_dropin" | grep -q '^# Written by slipway'; then
  remove_path "$proxy_dropin" reload_units
  remove_path {{q .ProxyEnvFile}}
fi
{{- end}}
{{- if eq .Family "flatcar"}}
# Flatcar's unit reads its configuration from CONTAINERD_CONFIG (the OS default is in /usr).
{{file "/etc/systemd/system/containerd.service.d/10-slipway-config.conf" "0644" "# Written by slipway: use /etc/containerd/config.toml.\n[Service]\nEnvironment=CONTAINERD_CONFIG=/etc/containerd/config.toml\n" "reload_units"}}
{{- end}}
if [ "$reload_units" = 1 ]; then
  quiet systemctl daemon-reload
  restart_containerd=1
fi
# containerd's CRI plugin watches the CNI configuration directory from its start; a directory
# created later is never watched, and the node would stay NotReady with the CNI's file in it.
if [ ! -d /etc/cni/net.d ]; then
  mkdir -p /etc/cni/net.d
  changed "created /etc/cni/net.d"
  restart_containerd=1
fi
enable_unit containerd
if [ "$restart_containerd" = 1 ]; then
  quiet systemctl restart containerd
  changed "restarted containerd"
elif ! active containerd; then
  quiet systemctl start containerd
  changed "started containerd"
fi
wait_for 60 "containerd to answer on /run/containerd/containerd.sock" ctr version

{{template "kubelet-resolver" .}}
