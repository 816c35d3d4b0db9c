{{- template "proxy" .Proxy}}
want={{q .PlainVersion}}
{{- if and (eq .Source "packages") (eq .Family "debian")}}
repo={{q .Repo}}
keyring={{q .DebKeyring}}
export DEBIAN_FRONTEND=noninteractive
{{- template "dpkg-recover"}}

# Installed package versions look like 1.36.3-1.1: the upstream revision is not ours to guess.
pkg_version() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | awk '$3 == "installed" {print $4}' || true; }
need=0
for p in kubeadm kubelet kubectl; do
  case "$(pkg_version "$p")" in "$want"-*) ;; *) need=1 ;; esac
done
if [ "$need" = 1 ]; then
  list_changed=0
  {{file .DebList "0644" .DebListEntry "list_changed"}}
  if [ "$list_changed" = 1 ] || [ ! -s "$keyring" ]; then
    tools=()
    command -v curl >/dev/null || tools+=(curl)
    command -v gpg >/dev/null || tools+=(gpg)
    if [ "${#tools[@]}" -gt 0 ]; then
      quiet apt-get update
      quiet apt-get install -y --no-install-recommends "${tools[@]}"
      changed "installed ${tools[*]}"
    fi
    key=$(mktemp)
    quiet curl -fsSL --proto {{q .CurlProto}} --retry 3 -o "$key" "${repo}Release.key" || fail "could not download the signing key ${repo}Release.key"
    mkdir -p -m 0755 "$(dirname "$keyring")"
    if grep -q 'BEGIN PGP PUBLIC KEY BLOCK' "$key"; then
      gpg --dearmor <"$key" | put_file "$keyring" 0644
    else
      put_file "$keyring" 0644 <"$key"
    fi
    rm -f "$key"
  fi
  # Only the Kubernetes list: other sources may be unreachable, and they are not needed here.
  quiet apt-get update -o Dir::Etc::sourcelist={{q .DebList}} -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
  pkgver=$(apt-cache madison kubeadm | awk -F'|' -v w="$want-" '{gsub(/[[:space:]]/, "", $2)} index($2, w) == 1 {print $2; exit}' || true)
  [ -n "$pkgver" ] || fail "kubeadm $want is not in $repo"
  extra=(cri-tools)
  if apt-cache show kubernetes-cni >/dev/null 2>&1; then extra+=(kubernetes-cni); fi
  quiet apt-mark unhold kubeadm kubelet kubectl
  quiet apt-get install -y --allow-downgrades --allow-change-held-packages \
    "kubeadm=$pkgver" "kubelet=$pkgver" "kubectl=$pkgver" "${extra[@]}"
  changed "installed kubeadm, kubelet and kubectl $pkgver"
fi
held=$(apt-mark showhold)
for p in kubeadm kubelet kubectl; do
  if ! grep -qx "$p" <<<"$held"; then
    quiet apt-mark hold "$p"
    changed "held $p at its version"
  fi
done
{{- else if eq .Source "packages"}}
rpm_version() { if rpm -q "$1" >/dev/null 2>&1; then rpm -q --qf '%{VERSION}\n' "$1" | head -n 1; fi; }
{{file "/etc/yum.repos.d/kubernetes.repo" "0644" .RepoFile ""}}
need=0
for p in kubeadm kubelet kubectl; do
  [ "$(rpm_version "$p")" = "$want" ] || need=1
done
if [ "$need" = 1 ]; then
  # The repository excludes these packages (that is the hold); this install lifts it once.
  quiet dnf install -y --disableexcludes=kubernetes "kubeadm-$want" "kubelet-$want" "kubectl-$want" cri-tools kubernetes-cni
  changed "installed kubeadm, kubelet and kubectl $want"
fi
{{- else}}
bin_dir={{q .BinDir}}
{{- if eq .Source "url"}}
release={{q .ReleaseURL}}
{{- else}}
upload={{q .UploadDir}}
{{- end}}
binary_version() {
  case "$1" in
    kubeadm) "$bin_dir/kubeadm" version -o short ;;
    kubelet) "$bin_dir/kubelet" --version | awk '{print $2}' ;;
    kubectl) "$bin_dir/kubectl" version --client | awk 'NR == 1 {print $3}' ;;
  esac 2>/dev/null || true
}
mkdir -p "$bin_dir"
for b in kubeadm kubelet kubectl; do
  [ "$(binary_version "$b")" != "v$want" ] || continue
  tmp=$(mktemp "$bin_dir/.$b.slipway.XXXXXX")
{{- if eq .Source "url"}}
  quiet curl -fsSL --proto {{q .CurlProto}} --retry 3 -o "$tmp" "$release/$b" || fail "could not download $release/$b"
  sum=$(curl -fsSL --proto {{q .CurlProto}} --retry 3 "$release/$b.sha256" | awk '{print $1}') || fail "could not download $release/$b.sha256"
  [ -n "$sum" ] || fail "$release/$b.sha256 is empty"
{{- else}}
  [ -f "$upload/$b" ] || fail "$upload/$b is missing: upload the binaries before installing"
  cp "$upload/$b" "$tmp"
  sum=""
  if [ -f "$upload/$b.sha256" ]; then sum=$(awk '{print $1}' "$upload/$b.sha256"); fi
{{- end}}
  if [ -n "$sum" ] && [ "$(sha256sum "$tmp" | awk '{print $1}')" != "$sum" ]; then
    rm -f "$tmp"
    fail "$b does not match its sha256 checksum"
  fi
  chmod 0755 "$tmp"
  mv -f "$tmp" "$bin_dir/$b"
  changed "installed $b v$want in $bin_dir"
done
units_changed=0
{{file "/etc/systemd/system/kubelet.service" "0644" .KubeletUnit "units_changed"}}
{{file "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf" "0644" .KubeadmDropIn "units_changed"}}
if [ "$units_changed" = 1 ]; then quiet systemctl daemon-reload; fi
{{- end}}

# Enabled, not started: kubeadm init or join starts the kubelet with its configuration.
enable_unit kubelet
