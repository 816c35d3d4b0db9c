package phases

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/images"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// The import-images phase loads machineController.imageArchive into a control plane's
// containerd, for sites without a registry: it uploads the archive from the operator's machine,
// unless containerd there already holds every image of it, imports it, and records the
// archive's hash for the plan.
var _ = register(Phase{
	Name:  plan.StepImportImages,
	Short: "load machineController.imageArchive into the host's containerd",
	Run:   func(ctx context.Context, r *Run, host string) error { return importImages(ctx, r, host) },
})

// importImagesRun is what importing images reads of a run.
type importImagesRun interface {
	nodes
	manifest
	api
	logger
}

// uploadedArchive is where the archive goes on the host until the import removes it.
var uploadedArchive = path.Join(scripts.ImageArchiveDir, "slipway-images.tar")

func importImages(ctx context.Context, r importImagesRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	archive := r.Manifest().MachineController.ImageArchive
	refs, hash, err := readArchive(archive)
	if err != nil {
		return err
	}
	have, err := n.SSH.Command(ctx, "ctr", "-n", "k8s.io", "images", "ls", "-q").Output()
	if err != nil {
		return fmt.Errorf("listing the images of containerd on %s: %w", host, err)
	}
	if missing := absent(refs, string(have)); len(missing) > 0 {
		f, err := os.Open(archive)
		if err != nil {
			return fmt.Errorf("machineController.imageArchive: %w", err)
		}
		// SFTP needs the directory; a fresh host has none (root's only: the archive is 0600).
		if err := n.SSH.Command(ctx, "mkdir", "-p", "-m", "0700", scripts.ImageArchiveDir).Run(); err != nil {
			f.Close()
			return fmt.Errorf("creating %s on %s: %w", scripts.ImageArchiveDir, host, err)
		}
		err = n.SSH.Upload(ctx, f, uploadedArchive, 0o600, "root")
		f.Close()
		if err != nil {
			return fmt.Errorf("uploading %s to %s: %w", archive, host, err)
		}
		r.Logf(host, "uploaded %s for %s", archive, strings.Join(missing, ", "))
	}
	script, err := scripts.ImportImages(uploadedArchive, refs)
	if err != nil {
		return err
	}
	if err := n.SSH.Script(ctx, "import-images", script).Run(); err != nil {
		return err
	}
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	return applied.Record(ctx, c, plan.ImageArchiveRecord(host), hash)
}

// absent returns the refs that the output of `ctr images ls -q` does not list.
func absent(refs []string, listed string) []string {
	have := strings.Fields(listed)
	var out []string
	for _, ref := range refs {
		if !slices.Contains(have, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// ImageArchiveHash checks machineController.imageArchive before anything changes: it must be
// an image archive holding the machine-controller image the manifest deploys, and the OpenStack
// cloud-controller-manager's when the manifest deploys that. It returns the
// archive's content hash, which the plan compares with what each control plane imported, or ""
// without an archive.
func ImageArchiveHash(c *v1beta1.Cluster) (string, error) {
	mc := c.MachineController
	if mc.ImageArchive == "" {
		return "", nil
	}
	refs, hash, err := readArchive(mc.ImageArchive)
	if err != nil {
		return "", err
	}
	if mc.Deploy != nil && *mc.Deploy && !slices.Contains(refs, mc.Image) {
		return "", fmt.Errorf("machineController.imageArchive %s holds %s, not the machine-controller image %s (machineController.image, or its default under registryConfiguration.overwriteRegistry)",
			mc.ImageArchive, strings.Join(refs, ", "), mc.Image)
	}
	if ccmdeploy.Wanted(c) {
		// The cloud-controller-manager runs on the control planes, which the archive is imported
		// into: it must hold the image the DaemonSet names.
		img, err := ccmdeploy.Image(c)
		if err != nil {
			return "", err
		}
		if !slices.Contains(refs, img) {
			return "", fmt.Errorf("machineController.imageArchive %s holds %s, not the cloud-controller-manager image %s (cloudProvider.external; under registryConfiguration.overwriteRegistry when that is set)",
				mc.ImageArchive, strings.Join(refs, ", "), img)
		}
	}
	return hash, nil
}

// readArchive returns the references an image archive holds and its content hash.
func readArchive(archive string) ([]string, string, error) {
	refs, err := images.Refs(archive)
	if err != nil {
		return nil, "", fmt.Errorf("machineController.imageArchive: %w", err)
	}
	f, err := os.Open(archive)
	if err != nil {
		return nil, "", fmt.Errorf("machineController.imageArchive: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, "", fmt.Errorf("machineController.imageArchive: reading %s: %w", archive, err)
	}
	return refs, hex.EncodeToString(h.Sum(nil))[:16], nil
}
