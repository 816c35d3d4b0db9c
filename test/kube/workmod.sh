# shellcheck shell=bash
# Sourced by test/kube/build.sh and test/conformance/build.sh: how a Kubernetes release is built
# from the Go module proxy, written once.

# kube_workmod DIR VERSION writes DIR/go.mod (unless it is there): a module that requires
# k8s.io/kubernetes at VERSION with its staging modules (./staging/... in its go.mod, which a
# module download cannot follow) replaced by their published v0.X.Y releases.
kube_workmod() {
  local dir=$1 version=$2 minor patch gomod
  [ -f "$dir/go.mod" ] && return 0
  minor=${version#v1.}; minor=${minor%%.*}
  patch=${version##*.}
  mkdir -p "$dir"
  gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module slipway.local/kubebuild"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    grep -E '^\s*k8s.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.${minor}.${patch}" '{print "replace " $1 " => " $1 " " v}'
  } >"$dir/go.mod.tmp"
  mv "$dir/go.mod.tmp" "$dir/go.mod"
}

# kube_ldflags VERSION prints the -ldflags that stamp VERSION into a Kubernetes binary (what
# `kubeadm version` and the e2e suite report) and strip it.
kube_ldflags() {
  local version=$1 minor now ld p
  minor=${version#v1.}; minor=${minor%%.*}
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=$now"
  done
  echo "$ld"
}
