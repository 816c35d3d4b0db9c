package addons

import "github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"

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
	p, ok := cniPods[CNI(c)]
	return p[0], p[1], ok
}
