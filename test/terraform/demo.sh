#!/usr/bin/env bash
# make demo-openstack / demo-openstack-down: the quick start of terraform/openstack/README.md on
# this machine, against the OpenStack simulator.
#
# up:   the sandbox's assets host (packages, containerd, the image registry: the "internet" here)
#       and the OpenStack simulator, whose servers boot as hosts and which serves the assets at
#       its API's address, where every server reaches it through its router; then the README's
#       steps: terraform apply of terraform/openstack (unchanged, copied to DIR/terraform, with a
#       terraform.tfvars.json for the simulator), slipway apply -t through the bastion, trusting
#       the hosts' keys on first use; then the nodes and the pool.
# down: slipway reset (the machine-controller deletes the pool's servers), terraform destroy, then
#       the simulator and the sandbox.
# Both print how long each phase took, and append it to DIR/phases.tsv (test/bench/quickstart.sh
# reads it).
#
# usage: test/terraform/demo.sh up|down [DIR]
# env:   KUBE_VERSION (up: the one version built and installed), GO (go), SLIPWAY (bin/slipway),
#        WORKER_REPLICAS (2)
# DIR (default test/terraform/.demo) holds everything: sandbox/, openstack/ (the simulator's pid,
# log, openrc.sh, ca.pem), terraform/ (the configuration and its state), slipway.yaml, the
# kubeconfig and the cluster's known_hosts.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dir=${2:-test/terraform/.demo}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
go=${GO:-go}
slipway=${SLIPWAY:-$root/bin/slipway}
# The cluster's name, which is also the prefix of every cloud resource Terraform creates.
cluster=demo
# The sandbox network (for its assets host only) and the simulator's cloud name, both apart from
# the e2e tests' and make demo's, so that they can run on the same machine.
subnet=172.30.254.0/24
cloud=quickdemo
# The ports at which the simulator serves the sandbox's registry and files to the servers.
registry_port=5000 files_port=8080

sim() { OPENSTACK_DIR="$dir/openstack" OPENSTACK_NAME=$cloud GO="$go" test/openstack-sim/up.sh "$@"; }
tf() { TF_CLI_CONFIG_FILE="$dir/terraform.rc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 terraform -chdir="$dir/terraform" "$@"; }
# slipway run from DIR, which is where it writes the cluster's kubeconfig; -t runs terraform output
# there, with the same CLI config as terraform apply.
slipway() {
  (cd "$dir" && TF_CLI_CONFIG_FILE="$dir/terraform.rc" "$slipway" "$@" -m slipway.yaml -t terraform --known-hosts "$dir/known_hosts")
}
# The simulator's OS_* variables, without any of the user's that would pick another cloud.
openrc() {
  unset OS_CLOUD OS_TOKEN OS_PROJECT_ID OS_TENANT_NAME OS_APPLICATION_CREDENTIAL_ID OS_APPLICATION_CREDENTIAL_SECRET OS_DOMAIN_NAME
  # shellcheck source=/dev/null
  . "$dir/openstack/openrc.sh"
}

# phase NAME COMMAND...: runs the command and records how long it took.
phases=()
phase() {
  local name=$1 start=$SECONDS
  shift
  echo "==> $name"
  "$@"
  phases+=("$name	$((SECONDS - start))")
  printf '%s\t%s\n' "$name" "$((SECONDS - start))" >>"$dir/phases.tsv"
}
report() {
  echo
  echo "# phases (seconds):"
  printf '#   %s\n' "${phases[@]}"
}

# json FILE EXPR: a value from a JSON file (EXPR indexes the parsed document d).
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

sandbox_up() {
  # The machine-controller image is tagged with the version linked into the slipway that deploys
  # it, read from the binary.
  local version
  version=$("$slipway" version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
  # One bare host: a sandbox needs one; the cluster's hosts are the cloud's servers.
  "$go" run ./test/sandbox up --name "$cloud" --subnet "$subnet" --hosts 1 --control-planes 1 \
    --versions "$KUBE_VERSION" --slipway-version "$version" --dir "$dir/sandbox" >/dev/null
}

cloud_up() {
  local registry files
  registry=$(json "$dir/sandbox/state.json" 'd["assets"]["registry"]')
  files=$(json "$dir/sandbox/state.json" 'd["assets"]["files"]')
  OPENSTACK_SIM_FLAGS="--forward $registry_port=${registry#http://} --forward $files_port=${files#http://}" sim up >/dev/null
}

terraform_apply() {
  test/terraform/provider.sh --cli-config "$dir/terraform.rc" >/dev/null
  mkdir -p "$dir/terraform"
  cp terraform/openstack/*.tf "$dir/terraform/"
  local key=$dir/sandbox/id_ed25519
  # The simulator's external network, image and flavors, and the sandbox's SSH key.
  cat >"$dir/terraform/terraform.tfvars.json" <<EOF
{"cluster_name": "$cluster", "external_network_name": "public", "image": "debian-12",
 "bastion_flavor": "m1.small", "control_plane_flavor": "m1.medium", "worker_flavor": "m1.small",
 "worker_replicas": ${WORKER_REPLICAS:-2}, "ssh_user": "debian",
 "ssh_public_key_file": "$key.pub", "ssh_private_key_file": "$key"}
EOF
  tf apply -auto-approve -input=false >"$dir/terraform-apply.log" || {
    tail -40 "$dir/terraform-apply.log" >&2
    return 1
  }
}

# write_manifest writes what Terraform does not say: the version, the assets as the servers reach
# them (at the simulator's address), and pool1's operating system (terraform/openstack says
# ubuntu; the simulator's debian-12 image boots the sandbox's Debian node image).
write_manifest() {
  local gateway files cgroup_v1=""
  gateway=$(sed -n 's|^export OS_AUTH_URL=https\?://\([^:/]*\).*|\1|p' "$dir/openstack/openrc.sh")
  files=http://$gateway:$files_port
  if [ "$(json "$dir/sandbox/state.json" 'd["cgroupV1"]')" = True ]; then
    # This machine's Docker runs containers on cgroup v1, which kubelets refuse unless allowed.
    cgroup_v1="  allowCgroupV1: true"
  fi
  cat >"$dir/slipway.yaml" <<EOF
# make demo-openstack: the control planes, the bastion and the API load balancer come from
# terraform/openstack's outputs (-t terraform), the worker pool from its slipway_workers.
apiVersion: slipway.dev/v1beta1
kind: Cluster
name: $cluster
versions:
  kubernetes: $KUBE_VERSION
clusterNetwork:
  cni: {flannel: {}}
  # The servers are containers: they resolve through Docker's 127.0.0.11, which pods cannot use,
  # and their conntrack limit is read-only.
  upstreamDNS: ["$gateway"]
  kubeProxy: {conntrackMaxPerCore: 0}
# They share this machine's disk: no disk-pressure eviction (as in kind).
kubelet:
  evictionHard: {memory.available: 100Mi, nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
$cgroup_v1
cloudProvider:
  openstack: {}
  external: true
# No internet registry is reachable: the sandbox's registry and files, served by the simulator at
# $gateway, hold the images and packages under their usual names.
containerRuntime:
  containerd:
    release: {baseURL: "$files/containerd/releases/download", insecure: true}
    registries:
      registry.k8s.io: {mirrors: ["http://$gateway:$registry_port"]}
      ghcr.io: {mirrors: ["http://$gateway:$registry_port"]}
assets:
  packages: {baseURL: "$files", insecure: true}
workers:
  - name: pool1
    providerSpec: {operatingSystem: debian}
EOF
}

# wait_nodes KUBECTL ARGS...: waits until the control planes and the pool's workers are Ready
# Nodes, for at most 10 minutes.
wait_nodes() {
  local want=$(( $(tf output -json slipway_hosts | json /dev/stdin 'len(d["control_plane"]["private_address"])') + ${WORKER_REPLICAS:-2} ))
  local start=$SECONDS ready=0 last=""
  while [ $((SECONDS - start)) -lt 600 ]; do
    ready=$("$@" get nodes --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l)
    [ "$ready" != "$last" ] && echo "#   $ready of $want nodes Ready ($((SECONDS - start)) s)"
    last=$ready
    [ "$ready" -ge "$want" ] && return 0
    sleep 2
  done
  echo "demo-openstack: $ready of $want nodes Ready after 10 minutes:" >&2
  "$@" get nodes,machines -A -o wide >&2 || true
  return 1
}

up() {
  : "${KUBE_VERSION:?set KUBE_VERSION, the Kubernetes version to build and install}"
  rm -f "$dir/phases.tsv"
  local start=$SECONDS
  phase "sandbox assets up" sandbox_up
  phase "OpenStack simulator up" cloud_up
  openrc
  echo "# OpenStack simulator: $OS_AUTH_URL"
  phase "terraform apply" terraform_apply
  write_manifest
  # The servers are ACTIVE when terraform apply returns; slipway waits for their sshd. The pool
  # is waited for below, so that its time is a phase of its own.
  phase "slipway apply" slipway apply --auto-approve --trust-unknown-hosts --wait-pools=false

  local kubectl
  kubectl=$(test/kube/build.sh "$KUBE_VERSION" kubectl)/kubectl
  local kc=(--kubeconfig "$dir/$cluster-kubeconfig")
  phase "pool Ready" wait_nodes "$kubectl" "${kc[@]}"
  echo
  "$kubectl" "${kc[@]}" get nodes -o wide
  echo
  "$kubectl" "${kc[@]}" get machinedeployments,machinesets,machines -A
  report
  echo
  echo "# make demo-openstack took $((SECONDS - start)) s. The cluster: export KUBECONFIG=$dir/$cluster-kubeconfig"
  echo "# The cloud: source $dir/openstack/openrc.sh; openstack server list; terraform -chdir=$dir/terraform output"
  echo "# Remove it all: make demo-openstack-down"
}

down() {
  if [ -f "$dir/openstack/pid" ] && kill -0 "$(cat "$dir/openstack/pid")" 2>/dev/null; then
    openrc
    if [ -f "$dir/slipway.yaml" ] && [ -f "$dir/terraform/terraform.tfstate" ]; then
      # reset deletes the pool through the machine-controller, which needs the cloud.
      phase "slipway reset" slipway reset --auto-approve ||
        echo "demo-openstack: slipway reset failed; destroying the infrastructure anyway" >&2
    fi
    if [ -f "$dir/terraform/terraform.tfstate" ]; then
      phase "terraform destroy" tf destroy -auto-approve -input=false >/dev/null ||
        echo "demo-openstack: terraform destroy failed; stopping the simulator removes its hosts anyway" >&2
    fi
  fi
  phase "OpenStack simulator down" sim down
  phase "sandbox down" "$go" run ./test/sandbox down --dir "$dir/sandbox"
  rm -rf "$dir/terraform" "$dir/slipway.yaml" "$dir/known_hosts" "$dir/$cluster-kubeconfig" "$dir/$cluster-pki.tar.gz"
  report
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
  echo "usage: $0 up|down [DIR]" >&2
  exit 2
  ;;
esac
