#!/usr/bin/env bash
# make openstack-up / openstack-down: the OpenStack simulator with its servers as sandbox hosts,
# in the background. State (pid, log, openrc.sh, clouds.yaml) lives in OPENSTACK_DIR.
#
# usage: test/openstack-sim/up.sh up|down
# env:   OPENSTACK_DIR (default test/openstack-sim/.state), OPENSTACK_SIM_LISTEN (default: the
#        external network's gateway, port 8774: this machine and every server reach it there),
#        OPENSTACK_NAME (openstack), OPENSTACK_SIM_FLAGS (more flags for openstack-sim, split on
#        spaces: --provider-network sandbox=slipway-sandbox, say), GO (go)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${OPENSTACK_DIR:-test/openstack-sim/.state}
listen=${OPENSTACK_SIM_LISTEN:-}
name=${OPENSTACK_NAME:-openstack}
read -ra extra <<<"${OPENSTACK_SIM_FLAGS:-}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pidfile=$dir/pid

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "${1:-}" in
up)
  if running; then
    echo "# the simulator already runs (pid $(cat "$pidfile")); make openstack-down stops it" >&2
  else
    ${GO:-go} build -o "$dir/openstack-sim" ./test/openstack-sim
    rm -f "$dir/openrc.sh" "$dir/clouds.yaml"
    # The simulator outlives this script, so it keeps none of the descriptors this script
    # inherited: a lock that the caller holds for its command's run (flock LOCK make demo), for
    # one, would stay held as long as the simulator runs.
    (
      for fd in /proc/self/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
      done
      exec nohup "$dir/openstack-sim" ${listen:+--listen "$listen"} --hosts --tls --name "$name" --dir "$dir" \
        ${extra[@]+"${extra[@]}"} </dev/null >"$dir/sim.log" 2>&1
    ) &
    echo $! >"$pidfile"
    # The first start builds the node image (minutes on a cold cache); then it serves at once.
    for _ in $(seq 1800); do
      [ -s "$dir/clouds.yaml" ] && break
      running || { tail -20 "$dir/sim.log" >&2; echo "openstack-sim exited; its log is $dir/sim.log" >&2; exit 1; }
      sleep 0.5
    done
    [ -s "$dir/clouds.yaml" ] || { echo "openstack-sim did not start within 15 minutes; see $dir/sim.log" >&2; exit 1; }
  fi
  cat "$dir/openrc.sh"
  echo "# or: export OS_CLIENT_CONFIG_FILE=$dir/clouds.yaml OS_CLOUD=slipway-sim"
  echo "# log: $dir/sim.log; control API: ${OS_AUTH_URL:-$(sed -n 's/^export OS_AUTH_URL=//p' "$dir/openrc.sh")}" | sed 's|/identity/v3$|/_sim/state (curl --cacert '"$dir"'/ca.pem)|'

  ;;
down)
  if running; then
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    # It removes its hosts before it exits.
    for _ in $(seq 240); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then echo "openstack-sim (pid $pid) did not stop within a minute" >&2; exit 1; fi
  fi
  rm -f "$pidfile"
  "${GO:-go}" run ./test/openstack-sim down --name "$name"
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
