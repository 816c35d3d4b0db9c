// Package imagelist lists every container image a manifest's cluster runs, exactly as the
// cluster pulls it: kubeadm's control-plane images, the CNI's, the machine-controller's and the
// OpenStack cloud-controller-manager's, each after registryConfiguration.overwriteRegistry. It
// only gathers what the packages that render those components say (kubeadm.Images,
// addons.Images, machineController.image, ccmdeploy.Image), so that the list and what apply
// renders come from the same functions; a test renders the components and checks both ways.
// Moves pairs the images of a cluster with and without overwriteRegistry, for mirror-images.
package imagelist

import (
	"fmt"
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
	us, err := uses(c)
	if err != nil {
		return nil, err
	}
	byRef := map[string][]string{}
	for _, u := range us {
		if !slices.Contains(byRef[u.ref], u.component) {
			byRef[u.ref] = append(byRef[u.ref], u.component)
		}
	}
	out := make([]Image, 0, len(byRef))
	for _, r := range slices.Sorted(maps.Keys(byRef)) {
		cs := byRef[r]
		slices.Sort(cs)
		out = append(out, Image{Ref: r, Components: cs})
	}
	return out, nil
}

// use is one image one component runs.
type use struct{ component, ref string }

// uses lists what c's cluster runs, component by component. The order depends only on which
// components the manifest asks for, not on the registry, so that two clusters that differ
// only in registryConfiguration list each image at the same position (see Moves).
func uses(c *v1beta1.Cluster) ([]use, error) {
	var out []use
	cp, err := kubeadm.Images(c)
	if err != nil {
		return nil, err
	}
	for _, r := range cp {
		// kubeadm's images are named after their components: kube-apiserver, etcd, coredns, pause...
		out = append(out, use{component(r), r})
	}
	cni, err := addons.Images(c)
	if err != nil {
		return nil, err
	}
	for _, r := range cni {
		out = append(out, use{addons.CNI(c), r})
	}
	if mc := c.MachineController; mc.Deploy != nil && *mc.Deploy {
		out = append(out, use{MachineController, mc.Image})
	}
	if ccmdeploy.Wanted(c) {
		img, err := ccmdeploy.Image(c)
		if err != nil {
			return nil, err
		}
		out = append(out, use{CCM, img})
	}
	return out, nil
}

// Move is one image of a cluster under two registry configurations: the reference one
// cluster pulls (From) and the one the other pulls in its place (To).
type Move struct {
	From       string
	To         string
	Components []string
}

// Moves pairs the images of two clusters that differ only in registryConfiguration (see
// Cluster.WithOverwriteRegistry): each image from runs with the image to runs in its place. The
// pairs come from the same functions as For, so the To of the result are exactly For(to)'s
// references and the From exactly For(from)'s. They are sorted by To, each To once; an image
// that to pulls from two different places of from's is an error.
func Moves(from, to *v1beta1.Cluster) ([]Move, error) {
	a, err := uses(from)
	if err != nil {
		return nil, err
	}
	b, err := uses(to)
	if err != nil {
		return nil, err
	}
	if len(a) != len(b) {
		return nil, fmt.Errorf("the two clusters run different components (%d and %d images): they must differ only in their registry", len(a), len(b))
	}
	byTo := map[string]*Move{}
	for i, u := range a {
		if u.component != b[i].component {
			return nil, fmt.Errorf("the two clusters run different components (%s and %s): they must differ only in their registry", u.component, b[i].component)
		}
		m := byTo[b[i].ref]
		if m == nil {
			m = &Move{From: u.ref, To: b[i].ref}
			byTo[b[i].ref] = m
		}
		if m.From != u.ref {
			return nil, fmt.Errorf("%s would be the name of both %s and %s", m.To, m.From, u.ref)
		}
		if !slices.Contains(m.Components, u.component) {
			m.Components = append(m.Components, u.component)
		}
	}
	out := make([]Move, 0, len(byTo))
	for _, to := range slices.Sorted(maps.Keys(byTo)) {
		m := byTo[to]
		slices.Sort(m.Components)
		out = append(out, *m)
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
