#!/usr/bin/env bash
# make bench-quickstart: the OpenStack quick start's time by phase (terraform apply, slipway apply,
# pool Ready, slipway reset, terraform destroy), on this machine against the OpenStack simulator:
# make demo-openstack and make demo-openstack-down (test/terraform/demo.sh) in a fresh directory,
# RUNS times (default 1). It prints one table row per phase with each run's seconds and the load
# average before each run. Measure on a quiet machine; the figures go into test/bench/quickstart.md.
#
# env: KUBE_VERSION (required: the version built and installed), RUNS, GO, SLIPWAY
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBE_VERSION:?set KUBE_VERSION}"
runs=${RUNS:-1}
base=$(mktemp -d /tmp/slipway-bench-quickstart.XXXXXX)
# A run that did not get through its own teardown (a failure, an interrupt) is torn down here.
cleanup() {
  local rc=$?
  for d in "$base"/run*; do
    if [ -d "$d" ] && [ ! -e "$d/down.done" ]; then
      test/terraform/demo.sh down "$d" >/dev/null 2>&1 || echo "# tearing down $d failed: make demo-openstack-down DEMO_OPENSTACK_DIR=$d" >&2
    fi
  done
  rm -rf "$base"
  exit "$rc"
}
trap cleanup EXIT

loads=()
for i in $(seq "$runs"); do
  d=$base/run$i
  mkdir -p "$d"
  loads+=("$(cut -d' ' -f1-3 /proc/loadavg)")
  echo "# run $i of $runs: make demo-openstack (log $d/up.log)" >&2
  if ! test/terraform/demo.sh up "$d" >"$d/up.log" 2>&1; then
    tail -40 "$d/up.log" >&2
    exit 1
  fi
  echo "# run $i of $runs: make demo-openstack-down (log $d/down.log)" >&2
  if ! test/terraform/demo.sh down "$d" >"$d/down.log" 2>&1; then
    tail -40 "$d/down.log" >&2
    exit 1
  fi
  touch "$d/down.done"
done

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, Kubernetes $KUBE_VERSION, load average before each run: ${loads[*]}"
python3 - "$base" "$runs" <<'PY'
import sys
base, runs = sys.argv[1], int(sys.argv[2])
order, secs = [], {}
for i in range(1, runs + 1):
    for line in open(f"{base}/run{i}/phases.tsv"):
        name, s = line.rstrip("\n").split("\t")
        if name not in secs:
            order.append(name)
            secs[name] = []
        secs[name].append(int(s))
print("| phase | " + " | ".join(f"run {i} (s)" for i in range(1, runs + 1)) + " |")
print("|---|" + "---:|" * runs)
for name in order:
    print(f"| {name} | " + " | ".join(str(s) for s in secs[name]) + " |")
total = [sum(secs[n][i] for n in order if i < len(secs[n])) for i in range(runs)]
print("| total | " + " | ".join(str(t) for t in total) + " |")
PY
