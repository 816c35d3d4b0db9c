{{- /* Order matters: kubeadm first (it stops static pods and removes containers through the
CRI), then what it leaves behind. */ -}}
# kubeadm reset stops the control plane, removes the node's containers and etcd member data.
# The kubelet package ships an empty manifests directory; only real state calls for kubeadm.
if command -v kubeadm >/dev/null &&
  { [ -n "$(ls -A /etc/kubernetes/manifests 2>/dev/null)" ] || [ -e /etc/kubernetes/kubelet.conf ] ||
    [ -e /var/lib/kubelet/config.yaml ] || [ -e /var/lib/etcd/member ]; }; then
  # The whole cluster goes, every host at once: removing this host's etcd member would wait on a
  # quorum that the other control planes' resets are taking away (kubeadm retries for minutes).
  quiet kubeadm reset -f --skip-phases=remove-etcd-member --cri-socket {{q .CRISocket}}
  changed "ran kubeadm reset"
fi
if active kubelet; then
  quiet systemctl stop kubelet
  changed "stopped the kubelet"
fi
# The scheduled etcd snapshots stop; the snapshots taken stay.
if [ -e /etc/systemd/system/{{.SnapshotUnit}}.timer ]; then
  quiet systemctl disable --now {{.SnapshotUnit}}.timer
  rm -f /etc/systemd/system/{{.SnapshotUnit}}.timer /etc/systemd/system/{{.SnapshotUnit}}.service
  quiet systemctl daemon-reload
  changed "stopped the scheduled etcd snapshots (those taken stay in {{.SnapshotDir}})"
fi

# mounts_below DIR: the mount points strictly below DIR, deepest first (/proc/mounts escapes
# spaces and such as \040, which printf %b turns back).
mounts_below() {
  awk -v d="$1/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while IFS= read -r m; do printf '%b\n' "$m"; done
}
# reset_dir PATH: removes PATH, never through a mount point. What is mounted below it (volumes
# that pods left behind, an NFS share among them) is unmounted first, deepest first; anything
# that stays mounted stops the reset with its mount point named, as removing PATH would delete
# the data on it. A PATH that is a mount point itself (a disk of its own for etcd, say) is
# emptied and kept. rm --one-file-system is the second guard.
reset_dir() {
  local path=$1 m left
  [ -e "$path" ] || [ -L "$path" ] || return 0
  while IFS= read -r m; do
    if umount "$m" 2>/dev/null; then changed "unmounted $m"; fi
  done < <(mounts_below "$path")
  left=$(mounts_below "$path")
  if [ -n "$left" ]; then
    fail "not removing $path: still mounted below it, and unmounting failed: $(printf '%s ' $left)- unmount them (stop what uses them), then run reset again"
  fi
  if [ -d "$path" ] && [ ! -L "$path" ] && mountpoint -q "$path"; then
    if [ -n "$(ls -A "$path")" ]; then
      find "$path" -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system -- {} +
      changed "emptied $path (a mount point of its own, kept)"
    fi
    return 0
  fi
  rm -rf --one-file-system -- "$path"
  changed "removed $path"
}
for d in {{qs .Dirs}}; do
  reset_dir "$d"
done
# slipway's own state, except the apply lock that the reset holds.
for p in {{q .StateDir}}/* {{q .StateDir}}/.[!.]*; do
  case "${p##*/}" in {{range $i, $k := .Keep}}{{if $i}} | {{end}}{{q $k}}{{end}}) continue ;; esac
  reset_dir "$p"
done
# The CNI configuration goes, its directory stays: containerd watches that directory, and would
# not notice the next cluster's CNI configuration in one created anew.
if [ -n "$(ls -A /etc/cni/net.d 2>/dev/null)" ]; then
  find /etc/cni/net.d -xdev -mindepth 1 -delete
  changed "removed the CNI configuration in /etc/cni/net.d"
fi

# iptables rules and chains of kube-proxy (KUBE-*) and the CNIs (FLANNEL*, cali-*, CILIUM*),
# in every table, for IPv4 and IPv6. Other rules (Docker's, the administrator's) stay.
pattern='(^:|-[AIjg] )(KUBE-|FLANNEL|cali-|CILIUM)|flanneld masq'
for family in iptables ip6tables; do
  command -v "$family-save" >/dev/null || continue
  for table in filter nat mangle raw; do
    rules=$("$family-save" -t "$table" 2>/dev/null) || continue
    if grep -Eq "$pattern" <<<"$rules"; then
      grep -Ev "$pattern" <<<"$rules" | "$family-restore" -T "$table"
      changed "removed Kubernetes and CNI rules from the $family $table table"
    fi
  done
done
if command -v ipvsadm >/dev/null && [ -n "$(ipvsadm -Sn 2>/dev/null)" ]; then
  quiet ipvsadm --clear
  changed "cleared IPVS services"
fi
for i in {{qs .Interfaces}}; do
  if ip link show "$i" >/dev/null 2>&1; then
    quiet ip link delete "$i"
    changed "deleted interface $i"
  fi
done
{{- if .RemoveBinaries}}

# What InstallKubernetes installed, the kubelet's enablement first: package removal leaves
# the link in multi-user.target.wants behind.
if systemctl is-enabled --quiet kubelet 2>/dev/null; then
  quiet systemctl disable kubelet
  changed "disabled kubelet"
fi
{{- if and .Packages (eq .Family "debian")}}
{{- template "dpkg-recover"}}
installed=()
for p in kubeadm kubelet kubectl cri-tools kubernetes-cni; do
  # "install ok installed", or "hold ok installed" for the held ones.
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' ok installed$'; then installed+=("$p"); fi
done
if [ "${#installed[@]}" -gt 0 ]; then
  quiet apt-mark unhold "${installed[@]}"
  DEBIAN_FRONTEND=noninteractive quiet apt-get purge -y "${installed[@]}"
  changed "removed ${installed[*]}"
fi
remove_path /etc/apt/sources.list.d/kubernetes.list
remove_path /etc/apt/keyrings/kubernetes-apt-keyring.gpg
{{- else if .Packages}}
installed=()
for p in kubeadm kubelet kubectl cri-tools kubernetes-cni; do
  if rpm -q "$p" >/dev/null 2>&1; then installed+=("$p"); fi
done
if [ "${#installed[@]}" -gt 0 ]; then
  quiet dnf remove -y "${installed[@]}"
  changed "removed ${installed[*]}"
fi
remove_path /etc/yum.repos.d/kubernetes.repo
{{- else}}
units=0
for f in /etc/systemd/system/kubelet.service /etc/systemd/system/kubelet.service.d/10-kubeadm.conf; do
  if [ -f "$f" ] && head -n 1 "$f" | grep -q '^# Written by slipway'; then
    remove_path "$f" units
  fi
done
if [ "$units" = 1 ]; then quiet systemctl daemon-reload; fi
for b in kubeadm kubelet kubectl; do
  remove_path {{q .BinDir}}/"$b"
done
{{- end}}
{{- end}}
