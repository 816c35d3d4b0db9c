package artifacts

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
)

// addonsFormat changes whenever the way add-on images are assembled changes.
const addonsFormat = "addons-v1"

// cniPluginsVersion is the github.com/containernetworking/plugins release whose
// plugins/meta/flannel stands in for github.com/flannel-io/cni-plugin, which the module proxy
// refuses (403). The plugin was moved out of that repository after v0.9.1, and both speak the
// CNI spec versions (up to 0.4.0) of the 0.3.1 configuration that pkg/addons renders.
const cniPluginsVersion = "v0.9.1"

// AddonImages are the images of the add-ons slipway deploys by default, under the names its
// manifests use, so that a ghcr.io mirror pointing at the sandbox registry serves them.
var AddonImages = []string{addons.FlannelImage, addons.FlannelCNIPluginImage}

// addons builds flanneld and the flannel CNI plugin with test/kube/flannel.sh and writes their
// two images into one OCI layout keyed by its inputs. Both sit on the node's Debian rootfs, the
// same base layer as kube-proxy's image (equal bytes, so hosts store and pull it once):
// flanneld execs iptables, iptables-restore and their ip6tables twins, and the plugin's image
// needs cp, which the DaemonSet's init container runs to install the plugin on the host.
func (b *builder) addons(ctx context.Context) (string, error) {
	rootfs, err := b.rootfs(ctx)
	if err != nil {
		return "", err
	}
	specs := make([]imageSpec, 0, len(AddonImages))
	for _, ref := range AddonImages {
		s, err := addonSpec(ctx, ref, b.flannel)
		if err != nil {
			return "", err
		}
		specs = append(specs, s)
	}
	inputs := []string{addonsFormat, rootfs}
	for _, s := range specs {
		inputs = append(inputs, s.ref, s.binary, s.target, strings.Join(s.entrypoint, " "))
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return "", err
	}
	dir := b.path("images", "addons-"+key)
	return dir, b.once(dir, func(tmp string) error { return b.writeLayout(tmp, rootfs, specs) })
}

// buildFunc builds one of test/kube/flannel.sh's binaries (flanneld or cni-plugin) at a version
// and returns its path.
type buildFunc func(ctx context.Context, what, version string) (string, error)

// addonSpec says how one add-on image is built. The paths are the ones the DaemonSet in
// pkg/addons/manifests/flannel.yaml runs: /opt/bin/flanneld, and /flannel copied by `cp`.
func addonSpec(ctx context.Context, ref string, build buildFunc) (imageSpec, error) {
	s := imageSpec{ref: ref, debian: true}
	var err error
	switch repo, tag := splitAddonRef(ref); repo {
	case "ghcr.io/flannel-io/flannel":
		s.binary, err = build(ctx, "flanneld", tag)
		s.target = "opt/bin/flanneld"
		s.entrypoint = []string{"/opt/bin/flanneld"}
	case "ghcr.io/flannel-io/flannel-cni-plugin":
		s.binary, err = build(ctx, "cni-plugin", cniPluginsVersion)
		s.target = "flannel"
	default:
		return s, fmt.Errorf("the sandbox cannot build add-on image %s", ref)
	}
	if err != nil {
		return s, fmt.Errorf("building %s: %w", ref, err)
	}
	return s, nil
}

// flannel builds one of test/kube/flannel.sh's binaries and returns its path.
func (b *builder) flannel(ctx context.Context, what, version string) (string, error) {
	return b.run(ctx, nil, filepath.Join(b.opts.Root, "test/kube/flannel.sh"), what, version)
}

// splitAddonRef splits ghcr.io/flannel-io/flannel:v0.27.4 into its repository with the registry
// host and its tag.
func splitAddonRef(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "latest"
	}
	return ref[:i], ref[i+1:]
}
