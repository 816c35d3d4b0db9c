package phases

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// The etcd-snapshots phase sets up a control plane's scheduled etcd snapshots
// (etcd.snapshots): a systemd timer whose service runs etcdctl from the cluster's etcd image and
// keeps the newest snapshots in scripts.SnapshotDir. It then records the set-up's salted hash on
// the host, root-only (applied.HostRecord: the set-up holds the S3 access key), so that the next
// apply changes it only when the schedule, the retention, the S3 settings or key, or the etcd
// image do. Without etcd.snapshots it removes the timer and the record, and keeps the
// snapshots.
var _ = register(Phase{
	Name:  plan.StepEtcdSnapshots,
	Short: "schedule etcd snapshots on a control plane (a systemd timer), or stop them",
	Run:   func(ctx context.Context, r *Run, host string) error { return etcdSnapshots(ctx, r, host) },
})

// etcdSnapshotsRun is what the etcd-snapshots phase reads of a run.
type etcdSnapshotsRun interface {
	nodes
	Rendered() Rendered
}

func etcdSnapshots(ctx context.Context, r etcdSnapshotsRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	script, ok := r.Rendered().SnapshotScripts[host]
	if !ok {
		return fmt.Errorf("no etcd snapshots set-up was rendered for %s", host)
	}
	if err := n.SSH.Script(ctx, "etcd-snapshots", script).Run(); err != nil {
		return err
	}
	record := r.Rendered().SnapshotRecords[host]
	if record == "" {
		return n.SSH.Command(ctx, "rm", "-f", scripts.SnapshotRecord).Run()
	}
	return n.SSH.Upload(ctx, strings.NewReader(record+"\n"), scripts.SnapshotRecord, applied.HostRecordMode, "root")
}
