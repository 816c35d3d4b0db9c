// Package imagelist lists every container image a manifest's cluster runs, exactly as the
// cluster pulls it: kubeadm's control-plane images, the CNI's, the machine-controller's and the
// OpenStack cloud-controller-manager's, each after registryConfiguration.overwriteRegistry. It
// only gathers what the packages that render those components say (kubeadm.Images,
// addons.Images, machineController.image, ccmdeploy.Image), so that the list and what apply
// renders come from the same functions; a test renders the components and checks both ways.
package imagelist

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

// Components that are not named after their image.
const (
	MachineController = "machine-controller"
	CCM               = "openstack-cloud-controller-manager"
)

// Image is one image reference and the components of the cluster that run it.
type Image struct {
	Ref        string   `json:"image"`
	Components []string `json:"components"`
}

// For returns the images c's cluster runs, sorted by reference, each once. c must be defaulted
// and valid (config.Load's result).
func For(c *v1beta1.Cluster) ([]Image, error) {
	uses := map[string][]string{}
	add := func(component string, refs ...string) {
		for _, r := range refs {
			if !slices.Contains(uses[r], component) {
				uses[r] = append(uses[r], component)
			}
		}
	}
	cp, err := kubeadm.Images(c)
	if err != nil {
		return nil, err
	}
	for _, r := range cp {
		// kubeadm's images are named after their components: kube-apiserver, etcd, coredns, pause...
		add(component(r), r)
	}
	cni, err := addons.Images(c)
	if err != nil {
		return nil, err
	}
	add(addons.CNI(c), cni...)
	if mc := c.MachineController; mc.Deploy != nil && *mc.Deploy {
		add(MachineController, mc.Image)
	}
	if ccmdeploy.Wanted(c) {
		img, err := ccmdeploy.Image(c)
		if err != nil {
			return nil, err
		}
		add(CCM, img)
	}
	out := make([]Image, 0, len(uses))
	for _, r := range slices.Sorted(maps.Keys(uses)) {
		cs := uses[r]
		slices.Sort(cs)
		out = append(out, Image{Ref: r, Components: cs})
	}
	return out, nil
}

// Refs returns the references of imgs.
func Refs(imgs []Image) []string {
	out := make([]string, len(imgs))
	for i, img := range imgs {
		out[i] = img.Ref
	}
	return out
}

// component is the last element of ref's repository path.
func component(ref string) string {
	repo := ref
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return path.Base(repo)
}
