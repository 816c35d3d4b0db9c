# Read-only: it changes nothing and works as an unprivileged user. Facts that need root
# (etcd_data) use sudo -n when the user is not root and sudo needs no password.
# SLIPWAY_PROBE_ROOT prefixes the files read, for tests only.
r=${SLIPWAY_PROBE_ROOT:-}
fact() { printf '%s=%s\n' "$1" "$(printf '%s' "${2:-}" | tr -d '\r\n')"; }
bool() { if "$@" >/dev/null 2>&1; then echo true; else echo false; fi; }
first_line() { "$@" 2>/dev/null </dev/null | head -n 1 || true; }

if [ "$(id -u)" = 0 ]; then
  sudo_ok=true
  priv() { "$@"; }
elif command -v sudo >/dev/null && sudo -n true >/dev/null 2>&1; then
  sudo_ok=true
  priv() { sudo -n "$@"; }
else
  sudo_ok=false
  priv() { return 1; }
fi

(
  . /etc/os-release 2>/dev/null || true
  fact os_id "${ID:-}"
  fact os_version_id "${VERSION_ID:-}"
)
fact arch "$(uname -m)"
fact kernel "$(uname -r)"
fact hostname "$(uname -n)"
fact swap_active "$(if [ "$(awk 'NR > 1' /proc/swaps 2>/dev/null | wc -l)" -gt 0 ]; then echo true; else echo false; fi)"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then fact cgroup_version 2; else fact cgroup_version 1; fi
fact sudo_ok "$sudo_ok"
fact privileged "$(bool priv true)"

# Versions: only the version token, e.g. 1.6.20~ds1 for containerd or v1.36.3 for the kubelet.
fact containerd_version "$(first_line containerd --version | awk '{print $3}')"
fact containerd_active "$(bool systemctl is-active --quiet containerd)"
fact kubelet_version "$(first_line kubelet --version | awk '{print $2}')"
fact kubelet_active "$(bool systemctl is-active --quiet kubelet)"
fact kubeadm_version "$(first_line kubeadm version -o short)"
fact kubectl_version "$(first_line kubectl version --client | awk '{print $3}')"

fact admin_conf "$(bool test -e "$r"/etc/kubernetes/admin.conf)"
fact kubelet_conf "$(bool test -e "$r"/etc/kubernetes/kubelet.conf)"
fact etcd_data "$(bool priv test -d "$r"/var/lib/etcd/member)"
expiry=
if [ -e "$r"/etc/kubernetes/pki/apiserver.crt ] && command -v openssl >/dev/null; then
  end=$(openssl x509 -noout -enddate -in "$r"/etc/kubernetes/pki/apiserver.crt 2>/dev/null | sed -n 's/^notAfter=//p' || true)
  if [ -n "$end" ]; then expiry=$(date -u -d "$end" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || true); fi
fi
fact apiserver_cert_expiry "$expiry"

# A resolver that names only loopback servers (Docker's 127.0.0.11, systemd-resolved's
# 127.0.0.53) is useless inside pods: CoreDNS would forward to itself.
upstream() { awk '$1 == "nameserver" && $2 !~ /^(127\.|::1$|0\.0\.0\.0$)/ {print $2}' "$1" 2>/dev/null | paste -sd, - || true; }
up=$(upstream "$r"/etc/resolv.conf)
if [ -n "$up" ]; then
  fact resolv_loopback false
else
  fact resolv_loopback true
  up=$(upstream "$r"/run/systemd/resolve/resolv.conf)
fi
fact resolv_upstream "$up"
