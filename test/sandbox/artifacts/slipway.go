package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/slipway-dev/slipway/pkg/images"
)

// slipwayFormat changes whenever the way the sandbox lays out slipway's images changes.
const slipwayFormat = "slipway-images-v1"

// slipwayImages builds slipway's own images with pkg/images, as `make image` does: the
// machine-controller of this checkout and the OpenStack cloud-controller-manager. They go into an
// OCI layout keyed by the binaries' content and slipway's version, under the references a
// slipway of this checkout deploys by default (ghcr.io/slipway-dev/machine-controller:<git
// describe>, and the CCM's registry.k8s.io name), which the ghcr.io and registry.k8s.io mirrors
// of the generated manifest reach. The machine-controller is tagged "latest" too: slipway built
// without a version (go build, as the e2e tests do) deploys that tag. Options.SlipwayVersion,
// when set, is the version tag: `make demo` passes the one it linked into bin/slipway, which a
// second git describe would miss if the checkout changed in between. A warm run costs the
// up-to-date checks of go build and test/ccm/build.sh.
func (b *builder) slipwayImages(ctx context.Context) (string, error) {
	version, revision := images.GitVersion(ctx, b.opts.Root)
	if b.opts.SlipwayVersion != "" {
		version = b.opts.SlipwayVersion
	}
	work, err := os.MkdirTemp(b.opts.Cache, ".slipway-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	mcBin := filepath.Join(work, "machine-controller")
	if err := images.GoBuild(ctx, b.opts.Root, version, mcBin, b.opts.Log); err != nil {
		return "", err
	}
	ccmBin, err := images.BuildCCM(ctx, b.opts.Root, b.opts.Log)
	if err != nil {
		return "", err
	}
	inputs := []string{slipwayFormat, version, revision}
	for _, p := range []string{mcBin, ccmBin} {
		sum, err := fileSHA256(p)
		if err != nil {
			return "", err
		}
		inputs = append(inputs, sum)
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return "", err
	}
	dir := b.path("images", "slipway-"+key)
	return dir, b.once(dir, func(tmp string) error {
		mc, err := images.MachineController(mcBin, version, revision).Tagged("latest")
		if err != nil {
			return err
		}
		built, err := images.Assemble([]images.Spec{mc, images.CloudControllerManager(ccmBin)}, images.Options{Created: time.Unix(0, 0).UTC()})
		if err != nil {
			return err
		}
		return images.WriteLayout(tmp, built)
	})
}
