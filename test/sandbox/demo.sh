#!/usr/bin/env bash
# make demo / make demo-down: slipway's whole job on one machine.
#
# up:   sandbox hosts (3 control planes behind a load balancer); the OpenStack simulator, whose
#       servers boot as hosts on the sandbox's own Docker network (the Neutron provider network
#       "sandbox"); slipway apply of the HA cluster with a worker pool, whose machines the
#       machine-controller creates as servers of that cloud; then the nodes and the pool.
# down: slipway reset (the machine-controller deletes the pool's servers first), then the
#       simulator (its hosts go with it) and the sandbox.
#
# usage: test/sandbox/demo.sh up|down [DIR]
# env:   KUBE_VERSION (up: the one version built and installed), GO (go), SLIPWAY (bin/slipway),
#        DEMO_POOL_REPLICAS (2)
# DIR (default test/sandbox/.state) holds the sandbox's state and, in openstack/, the
# simulator's: pid, sim.log, openrc.sh (the OS_* variables apply and reset need), ca.pem.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dir=${2:-test/sandbox/.state}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
go=${GO:-go}
slipway=${SLIPWAY:-$root/bin/slipway}
# The Neutron network that stands for the sandbox's Docker network (sandbox up --pool-network).
network=sandbox
# The simulator: test/openstack-sim/up.sh with its state beside the sandbox's, and a cloud name
# of its own, which labels its hosts.
sim() { OPENSTACK_DIR="$dir/openstack" OPENSTACK_NAME=demo GO="$go" test/openstack-sim/up.sh "$1"; }

up() {
  : "${KUBE_VERSION:?set KUBE_VERSION, the Kubernetes version to build and install}"
  local start=$SECONDS
  # The machine-controller image is tagged with the version linked into the slipway that deploys
  # it, read from the binary: a second git describe would differ after an edit or a commit.
  local version
  version=$("$slipway" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
  "$go" run ./test/sandbox up --hosts 3 --control-planes 3 --lb --versions "$KUBE_VERSION" --dir "$dir" \
    --pool-network "$network" --pool-replicas "${DEMO_POOL_REPLICAS:-2}" --slipway-version "$version"

  # The sandbox's Docker network, its /24 and the node image, from the state sandbox up wrote.
  local docker_network subnet image
  read -r docker_network subnet image < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["network"], s["subnet"], s["image"])' "$dir/state.json")
  local prefix=${subnet%.*}
  local gateway=$prefix.1
  # The simulator listens on this machine's address on the sandbox network: the hosts, the pods
  # on them (machine-controller, cloud-controller-manager) and the pool's servers reach it there.
  OPENSTACK_SIM_LISTEN=$gateway:8774 \
    OPENSTACK_SIM_FLAGS="--provider-network $network=$docker_network --image $image" sim up
  # shellcheck source=/dev/null
  . "$dir/openstack/openrc.sh"

  # The Neutron side of the sandbox network: its CIDR and gateway, and an allocation pool at the
  # top (.200 to .250), away from the addresses the sandbox gives its own hosts.
  openstack network show "$network" >/dev/null 2>&1 ||
    openstack network create "$network" -f value -c id >/dev/null
  openstack subnet show "$network-v4" >/dev/null 2>&1 ||
    openstack subnet create "$network-v4" --network "$network" --subnet-range "$subnet" --gateway "$gateway" \
      --allocation-pool "start=$prefix.200,end=$prefix.250" -f value -c id >/dev/null
  echo "# OpenStack simulator: $OS_AUTH_URL, network $network = Docker network $docker_network ($subnet)"

  (cd "$dir" && "$slipway" apply -m slipway.yaml -t tf.json --auto-approve)

  local kubectl
  kubectl=$(test/kube/build.sh "$KUBE_VERSION" kubectl)/kubectl
  local kc=(--kubeconfig "$dir/sandbox-kubeconfig")
  echo
  "$kubectl" "${kc[@]}" get nodes -o wide
  echo
  "$kubectl" "${kc[@]}" get machinedeployments,machinesets,machines -A
  echo
  echo "# make demo took $((SECONDS - start)) s. The cluster: export KUBECONFIG=$dir/sandbox-kubeconfig"
  echo "# The cloud: source $dir/openstack/openrc.sh; openstack server list. Remove it all: make demo-down"
}

down() {
  if [ -f "$dir/slipway.yaml" ] && [ -x "$slipway" ]; then
    # reset deletes the pool through the machine-controller, which needs the cloud: its OS_*
    # variables while the simulator runs. A failed reset does not keep the hosts.
    if (
      if [ -f "$dir/openstack/pid" ] && kill -0 "$(cat "$dir/openstack/pid")" 2>/dev/null; then
        # shellcheck source=/dev/null
        . "$dir/openstack/openrc.sh"
      fi
      cd "$dir" && "$slipway" reset -m slipway.yaml -t tf.json --auto-approve
    ); then :; else
      echo "demo: slipway reset failed; removing the cloud and the hosts anyway" >&2
    fi
  fi
  sim down
  "$go" run ./test/sandbox down --dir "$dir"
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
  echo "usage: $0 up|down [DIR]" >&2
  exit 2
  ;;
esac
