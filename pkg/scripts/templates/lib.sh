set -euo pipefail
export LC_ALL=C
export PATH="/opt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
umask 022

# changed MESSAGE: reports a change. Lines like this are all a successful run prints.
changed() { printf 'slipway: %s\n' "$*"; }

# fail MESSAGE: stops the script with a reason on stderr.
fail() {
  printf 'slipway: %s\n' "$*" >&2
  exit 1
}

# quiet CMD...: runs CMD with its output held back; shows it on stderr only if CMD fails.
quiet() {
  local out rc=0
  out=$("$@" 2>&1 </dev/null) || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'slipway: %s failed with exit code %d:\n%s\n' "$1" "$rc" "$out" >&2
    return "$rc"
  fi
}

# put_file PATH MODE [FLAG] <CONTENT: installs CONTENT at PATH when the content or the mode
# differ, and then sets the variable named FLAG to 1. An unchanged file is not touched.
put_file() {
  local path=$1 mode=$2 flag=${3:-} tmp
  mkdir -p "$(dirname "$path")"
  tmp=$(mktemp "$path.slipway.XXXXXX")
  cat >"$tmp"
  if [ -f "$path" ] && [ ! -L "$path" ] && cmp -s "$tmp" "$path" && [ "$(stat -c %a "$path")" = "${mode#0}" ]; then
    rm -f "$tmp"
    return 0
  fi
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$path"
  changed "wrote $path"
  if [ -n "$flag" ]; then printf -v "$flag" 1; fi
}

# remove_path PATH [FLAG]: removes PATH if it exists, then sets the variable named FLAG to 1.
# It does not cross into other file systems mounted below PATH.
remove_path() {
  if [ -e "$1" ] || [ -L "$1" ]; then
    rm -rf --one-file-system -- "$1"
    changed "removed $1"
    if [ -n "${2:-}" ]; then printf -v "$2" 1; fi
  fi
}

# wait_for SECONDS WHAT CMD...: polls CMD until it succeeds; after SECONDS it fails saying
# what it waited for.
wait_for() {
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1 </dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail "gave up after ${limit}s waiting for $what"
    fi
    sleep 0.5
  done
}

# active UNIT: whether the systemd unit is running.
active() { systemctl is-active --quiet "$1"; }

# enable_unit UNIT: enables UNIT to start at boot, without starting it.
enable_unit() {
  if ! systemctl is-enabled --quiet "$1" 2>/dev/null; then
    quiet systemctl enable "$1"
    changed "enabled $1"
  fi
}
