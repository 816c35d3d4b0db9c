package addons

import (
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// The pinned images of every add-on. Upgrading an add-on means changing these and the golden
// files.
const (
	FlannelImage               = "ghcr.io/flannel-io/flannel:v0.27.4"
	FlannelCNIPluginImage      = "ghcr.io/flannel-io/flannel-cni-plugin:v1.8.0-flannel1"
	CalicoNodeImage            = "docker.io/calico/node:v3.30.3"
	CalicoCNIImage             = "docker.io/calico/cni:v3.30.3"
	CalicoKubeControllersImage = "docker.io/calico/kube-controllers:v3.30.3"
	CiliumImage                = "quay.io/cilium/cilium:v1.18.4"
	CiliumOperatorImage        = "quay.io/cilium/operator-generic:v1.18.4"
	// OpenStackCCMImage is the OpenStack cloud-controller-manager, under upstream's name: `make
	// image` builds it from k8s.io/cloud-provider-openstack at this tag (pkg/images), laid out
	// like upstream's image, for sites and sandboxes that cannot pull upstream's.
	OpenStackCCMImage = "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"
)

// cniImages are the images of each CNI.
var cniImages = map[string][]string{
	"flannel": {FlannelImage, FlannelCNIPluginImage},
	"canal":   {FlannelImage, CalicoNodeImage, CalicoCNIImage, CalicoKubeControllersImage},
	"cilium":  {CiliumImage, CiliumOperatorImage},
}

// Images lists the images the cluster's add-ons run, as the cluster will pull them (with the
// registry overwritten when the manifest says so). An external CNI has none.
func Images(c *v1beta1.Cluster) ([]string, error) {
	var out []string
	for _, ref := range cniImages[CNI(c)] {
		img, err := image(c, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

// image rewrites ref's registry to registryConfiguration.overwriteRegistry, if set.
func image(c *v1beta1.Cluster, ref string) (string, error) {
	return c.RegistryConfiguration.Rewrite(ref)
}

// CNI names the cluster's pod network plugin: flannel, canal, cilium or external.
func CNI(c *v1beta1.Cluster) string {
	n := c.ClusterNetwork.CNI
	switch {
	case n.Canal != nil:
		return "canal"
	case n.Cilium != nil:
		return "cilium"
	case n.External != nil:
		return "external"
	default:
		return "flannel"
	}
}
