package phases

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// The install-kubernetes phase installs kubeadm, kubelet and kubectl at the manifest's exact
// version, from the manifest's assets: package repositories, downloads, or files uploaded from
// the operator's machine first.
var _ = register(Phase{
	Name:  plan.StepInstall,
	Short: "install kubeadm, kubelet and kubectl at the manifest's version",
	Run:   func(ctx context.Context, r *Run, host string) error { return installKubernetes(ctx, r, host) },
})

// installRun is what installing the binaries reads of a run.
type installRun interface {
	nodes
	manifest
}

func installKubernetes(ctx context.Context, r installRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	return installBinaries(ctx, r.Manifest(), n)
}

// installBinaries installs the manifest's kubeadm, kubelet and kubectl on n; upgrades use it too.
func installBinaries(ctx context.Context, c *v1beta1.Cluster, n Node) error {
	arch, err := n.Facts.GoArch()
	if err != nil {
		return err
	}
	if up := c.Assets.Upload; up != nil {
		if err := uploadBinaries(ctx, c, n, up.Directory); err != nil {
			return err
		}
	}
	script, err := scripts.InstallKubernetes(n.Facts.OS, scripts.InstallParams{Cluster: c, Arch: arch})
	if err != nil {
		return err
	}
	return n.SSH.Script(ctx, "install-kubernetes", script).Run()
}

// uploadBinaries copies kubeadm, kubelet and kubectl (and their .sha256 files when present)
// from the operator's directory to the host's upload directory, streaming each file.
func uploadBinaries(ctx context.Context, c *v1beta1.Cluster, n Node, dir string) error {
	dst := scripts.UploadDir("v" + strings.TrimPrefix(c.Versions.Kubernetes, "v"))
	if err := makeUploadDir(ctx, n, dst); err != nil {
		return err
	}
	for _, name := range []string{"kubeadm", "kubelet", "kubectl"} {
		if err := uploadFrom(ctx, n, dir, name, dst, 0o755, false); err != nil {
			return err
		}
		if err := uploadFrom(ctx, n, dir, name+".sha256", dst, 0o755, true); err != nil {
			return err
		}
	}
	return nil
}

// makeUploadDir creates dst on n (root-owned, 0755): uploads need their directory to exist.
func makeUploadDir(ctx context.Context, n Node, dst string) error {
	return n.SSH.Command(ctx, "mkdir", "-p", "-m", "0755", dst).Run()
}

// uploadFrom streams the file dir/name from the operator's machine (assets.upload.directory) to
// dst/name on n, owned by root with mode; a missing optional file (a checksum) is skipped.
func uploadFrom(ctx context.Context, n Node, dir, name, dst string, mode os.FileMode, optional bool) error {
	f, err := os.Open(filepath.Join(dir, name))
	if optional && os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("assets.upload.directory: %w", err)
	}
	defer f.Close()
	return n.SSH.Upload(ctx, f, path.Join(dst, name), mode, "root")
}
