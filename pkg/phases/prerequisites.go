package phases

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// The prerequisites phase prepares a host for kubeadm with the script the manifest rendered
// for it, then records the script's salted hash on the host (root-only), so that the next
// apply runs it again only when the manifest's registries, proxy or versions change it.
var _ = register(Phase{
	Name:  plan.StepPrerequisites,
	Short: "turn swap off, load kernel modules, set sysctls, install and configure containerd",
	Run:   func(ctx context.Context, r *Run, host string) error { return prerequisites(ctx, r, host) },
})

// prerequisitesRun is what the prerequisites phase reads of a run.
type prerequisitesRun interface {
	nodes
	manifest
	Rendered() Rendered
}

func prerequisites(ctx context.Context, r prerequisitesRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	return runPrerequisites(ctx, r, n)
}

// runPrerequisites runs the host's prerequisites script, with env exported first, and records
// its hash on the host.
func runPrerequisites(ctx context.Context, r prerequisitesRun, n Node, env ...string) error {
	script, ok := r.Rendered().PrereqScripts[n.Name]
	record := r.Rendered().PrereqRecords[n.Name]
	if !ok || record == "" {
		return fmt.Errorf("no prerequisites script was rendered for %s", n.Name)
	}
	if err := uploadContainerd(ctx, r.Manifest(), n); err != nil {
		return err
	}
	cmd := n.SSH.Script(ctx, "prerequisites", script)
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		return err
	}
	return recordPrerequisites(ctx, n, record)
}

// recordPrerequisites writes the host's prerequisites record (applied.HostRecord), root-only,
// where the next probe reads it.
func recordPrerequisites(ctx context.Context, n Node, record string) error {
	return n.SSH.Upload(ctx, strings.NewReader(record+"\n"), applied.PrereqHashFile, applied.HostRecordMode, "root")
}

// uploadContainerd copies containerd's release tarball (and its .sha256sum when the operator has
// it) from assets.upload.directory to the host, when the manifest's assets are uploaded and the
// host's containerd is older than the version needs: the prerequisites install it from there.
// Hosts that keep their containerd get nothing.
func uploadContainerd(ctx context.Context, c *v1beta1.Cluster, n Node) error {
	up := c.Assets.Upload
	if up == nil {
		return nil
	}
	rel, err := scripts.ContainerdUploadFor(c, n.Facts)
	if err != nil || !rel.Needed {
		return err
	}
	dst := scripts.ContainerdUploadDir(rel.Version)
	if err := makeUploadDir(ctx, n, dst); err != nil {
		return err
	}
	if err := uploadFrom(ctx, n, up.Directory, rel.Tarball, dst, 0o644, false); err != nil {
		return err
	}
	return uploadFrom(ctx, n, up.Directory, rel.Tarball+".sha256sum", dst, 0o644, true)
}
