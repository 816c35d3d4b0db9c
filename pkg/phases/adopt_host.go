package phases

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The adopt-host phase takes over a host that another tool (kubeadm by hand, KubeOne) prepared
// and joined: it records the prerequisites the manifest renders as done, root-only, exactly as
// the prerequisites phase records them after running, and changes nothing else. Containerd's
// configuration, the kubelet and the kernel settings stay the other tool's until the manifest's
// registries or proxy change, or containerd is upgraded: then the prerequisites run there.
var _ = register(Phase{
	Name:  plan.StepAdoptHost,
	Short: "record a host another tool prepared as prepared, changing nothing on it",
	Run:   func(ctx context.Context, r *Run, host string) error { return adoptHost(ctx, r, host) },
})

// adoptHostRun is what adopting a host reads of a run.
type adoptHostRun interface {
	nodes
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
	return n.SSH.Upload(ctx, strings.NewReader(record+"\n"), applied.PrereqHashFile, applied.PrereqHashMode, "root")
}
