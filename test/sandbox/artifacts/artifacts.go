package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options say which Kubernetes versions to prepare and where the inputs and the cache are.
type Options struct {
	// Versions are Kubernetes versions such as v1.36.3; each gets binaries, images, debs and a
	// release tree.
	Versions []string
	// Cache is the cache directory (SLIPWAY_CACHE, by default ~/.cache/slipway).
	Cache string
	// Root is the repository root, where test/kube and test/sandbox/node live.
	Root string
	// ExactCoreDNS builds every CoreDNS version kubeadm asks for. By default only the newest of
	// them is built and tagged under each wanted tag (v1.12.1 also serves as v1.12.0), which saves
	// a 3-minute build per extra version; CoreDNS patch releases within a minor of Kubernetes read
	// the same Corefile.
	ExactCoreDNS bool
	// SlipwayVersion tags the machine-controller image: the version linked into the slipway
	// binary that deploys it. Default: images.GitVersion of Root, as the Makefile's VERSION.
	SlipwayVersion string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Set is what Prepare produced: paths in the cache and the node image reference.
type Set struct {
	NodeImage string
	Releases  []Release
	// Addons is an OCI layout of the images of the add-ons slipway deploys by default (flannel,
	// see AddonImages), named by their upstream references like the releases' layouts.
	Addons string
	// Slipway is an OCI layout of slipway's own images (the machine-controller of this checkout
	// and the OpenStack cloud-controller-manager) under the references slipway deploys.
	Slipway string
	// ContainerdDir is laid out like github.com/containerd/containerd/releases/download/v<v>, for
	// ContainerdVersion: the tarball and its .sha256sum.
	ContainerdDir string
}

// Release is one Kubernetes version's artifacts.
type Release struct {
	// Version is the Kubernetes version, v1.36.3.
	Version string
	// Bin holds kubeadm, kubelet, kubectl, the control-plane binaries and etcd.
	Bin string
	// Images are the upstream references kubeadm wants for this version, all in Layout.
	Images []string
	// Layout is an OCI image layout whose index names each image by its upstream reference.
	Layout string
	// ReleaseDir is laid out like https://dl.k8s.io/release/<version>.
	ReleaseDir string
	// AptRepo is a flat apt repository laid out like pkgs.k8s.io/core:/stable:/<minor>/deb.
	AptRepo string
	// Minor is v1.34 for v1.36.3: the apt repository's channel.
	Minor string
	// CriTools is the cri-tools version packaged and served next to this release.
	CriTools string
	// CrictlDir is laid out like github.com/kubernetes-sigs/cri-tools/releases/download/<CriTools>.
	CrictlDir string
}

// Prepare builds whatever is missing from the cache and returns the paths. A cold run on 2 cores
// takes several minutes per Kubernetes version; a warm one about a second.
func Prepare(ctx context.Context, opts Options) (*Set, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if len(opts.Versions) == 0 {
		return nil, errors.New("preparing sandbox artifacts: no Kubernetes version given")
	}
	if err := os.MkdirAll(opts.Cache, 0o755); err != nil {
		return nil, fmt.Errorf("creating cache directory: %w", err)
	}
	b := &builder{opts: opts}
	set := &Set{}
	var err error
	step := func(name string, fn func() error) {
		if err != nil {
			return
		}
		start := time.Now()
		if err = fn(); err != nil {
			err = fmt.Errorf("%s: %w", name, err)
			return
		}
		fmt.Fprintf(opts.Log, "  %-40s %6.1fs\n", name, time.Since(start).Seconds())
	}
	step("node image", func() (e error) { set.NodeImage, e = b.nodeImage(ctx); return })
	step("pause", func() (e error) { b.pause, e = b.tool(ctx, "pause", ""); return })
	set.Releases = make([]Release, len(opts.Versions))
	for i, v := range opts.Versions {
		r := &set.Releases[i]
		r.Version = v
		step("kubernetes "+v, func() error { return b.kube(ctx, r) })
	}
	if !opts.ExactCoreDNS && err == nil {
		b.sharedCoreDNS = newestCoreDNS(set.Releases)
	}
	for i := range set.Releases {
		r := &set.Releases[i]
		step("crictl "+r.Version, func() error { return b.crictl(ctx, r) })
		step("images "+r.Version, func() error { return b.images(ctx, r) })
		step("release tree "+r.Version, func() error { return b.releaseTree(r) })
		step("apt repository "+r.Version, func() error { return b.aptRepo(ctx, r) })
	}
	step("containerd "+ContainerdVersion, func() (e error) { set.ContainerdDir, e = b.containerdRelease(ctx); return })
	step("add-on images", func() (e error) { set.Addons, e = b.addons(ctx); return })
	step("slipway images", func() (e error) { set.Slipway, e = b.slipwayImages(ctx); return })
	if err != nil {
		return nil, err
	}
	return set, nil
}

// builder carries what several steps share within one Prepare.
type builder struct {
	opts    Options
	pause   string
	coreDNS map[string]string
	// sharedCoreDNS, if set, is the one CoreDNS version built for every release.
	sharedCoreDNS string
}

func (b *builder) path(elem ...string) string {
	return filepath.Join(append([]string{b.opts.Cache}, elem...)...)
}
