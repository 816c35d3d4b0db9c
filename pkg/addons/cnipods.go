package addons

import (
	"maps"
	"slices"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// cniPods are the namespace and label selector of each CNI's per-node DaemonSet pods, as its
// manifest in manifests/ names them (TestCNIPodsMatchTheManifests holds them to it).
var cniPods = map[string][2]string{
	"flannel": {"kube-flannel", "app=flannel"},
	"canal":   {"kube-system", "k8s-app=canal"},
	"cilium":  {"kube-system", "k8s-app=cilium"},
}

// CNIPods returns the namespace and label selector of the pods that the cluster's CNI runs on
// every node: a node's pod network works once its pod there runs and is ready. ok is false for
// an external CNI, whose pods slipway does not know.
func CNIPods(c *v1beta1.Cluster) (namespace, selector string, ok bool) {
	return CNIPodsOf(CNI(c))
}

// KnownCNIs names, sorted, the CNIs whose per-node pods CNIPodsOf can find.
func KnownCNIs() []string { return slices.Sorted(maps.Keys(cniPods)) }

// CNIPodsOf returns the namespace and label selector of the named CNI's per-node pods; ok is
// false for a CNI slipway does not apply.
func CNIPodsOf(cni string) (namespace, selector string, ok bool) {
	p, ok := cniPods[cni]
	return p[0], p[1], ok
}
