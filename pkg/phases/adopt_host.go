package phases

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// The adopt-host phase takes over a host that another tool (kubeadm by hand, KubeOne) prepared
// and joined. It adds what slipway's own configuration refers to (scripts.Adopt: slipway's
// directory and the kubelet's resolver file, which an upgrade points the kubelets at), then
// records the prerequisites the manifest renders as done, root-only, exactly as the
// prerequisites phase records them after running. Containerd's configuration, the packages and
// the kernel settings stay the other tool's until the manifest's registries or proxy change, or
// containerd is upgraded: then the prerequisites run there.
var _ = register(Phase{
	Name:  plan.StepAdoptHost,
	Short: "take over a host another tool prepared: add slipway's directory and kubelet resolver file, record it as prepared",
	Run:   func(ctx context.Context, r *Run, host string) error { return adoptHost(ctx, r, host) },
})

// adoptHostRun is what adopting a host reads of a run.
type adoptHostRun interface {
	nodes
	manifest
	Rendered() Rendered
}

func adoptHost(ctx context.Context, r adoptHostRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	record := r.Rendered().PrereqRecords[n.Name]
	if record == "" {
		return fmt.Errorf("no prerequisites record was rendered for %s", n.Name)
	}
	script, err := scripts.Adopt(n.Facts.OS, r.Manifest().ClusterNetwork.UpstreamDNS)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := n.SSH.Script(ctx, "adopt", script).Run(); err != nil {
		return err
	}
	return recordPrerequisites(ctx, n, record)
}
