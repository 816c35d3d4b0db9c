package scripts

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Scheduled etcd snapshots (etcd.snapshots): where a control plane keeps them, the systemd units
// that take them, the script the service runs, and the record of what the etcd-snapshots step
// installed.
const (
	SnapshotDir       = "/var/lib/slipway/etcd-snapshots"
	SnapshotUnit      = "slipway-etcd-snapshot"
	SnapshotScript    = "/etc/slipway/etcd-snapshot.sh"
	SnapshotRecord    = "/etc/slipway/etcd-snapshots.sha256"
	snapshotContainer = "slipway-etcd-snapshot"
)

// SnapshotParams are one control plane's scheduled snapshots.
type SnapshotParams struct {
	// Node names the snapshot files (<node>-<UTC time>.db).
	Node string
	// Image is the cluster's etcd image, whose etcdctl takes the snapshot.
	Image string
	// Snapshots are the manifest's etcd.snapshots, defaulted.
	Snapshots v1beta1.EtcdSnapshots
}

// EtcdSnapshots returns the script that installs the timer of p's scheduled snapshots on a
// control plane, or with p nil the one that removes it. Either keeps the snapshots taken.
func EtcdSnapshots(p *SnapshotParams) (string, error) {
	d := struct {
		Remove                                             bool
		Unit, Script, Dir, OnCalendar, Schedule, RunScript string
		Retain                                             int
	}{Remove: p == nil, Unit: SnapshotUnit, Script: SnapshotScript, Dir: SnapshotDir}
	if p == nil {
		return render("etcd-snapshots", "stop the scheduled etcd snapshots", anyFamily, d)
	}
	cal, err := v1beta1.OnCalendar(p.Snapshots.Schedule)
	if err != nil {
		return "", fmt.Errorf("etcd.snapshots.schedule %q: %w", p.Snapshots.Schedule, err)
	}
	if p.Snapshots.Retain < 1 {
		return "", fmt.Errorf("etcd.snapshots.retain %d: keep at least one", p.Snapshots.Retain)
	}
	// The schedule goes into comments and unit files as it is: only what cron expressions use.
	if strings.Trim(p.Snapshots.Schedule, "0123456789*/,- @abcdefghijklmnopqrstuvwxyz") != "" {
		return "", fmt.Errorf("etcd.snapshots.schedule %q: unexpected characters", p.Snapshots.Schedule)
	}
	run, err := render("etcd-snapshot", "take one etcd snapshot and keep the newest", anyFamily, struct {
		Dir, Node, Image, Container string
		Retain                      int
	}{SnapshotDir, p.Node, p.Image, snapshotContainer, p.Snapshots.Retain})
	if err != nil {
		return "", err
	}
	d.OnCalendar, d.Schedule, d.RunScript, d.Retain = cal, strings.TrimSpace(p.Snapshots.Schedule), strings.TrimRight(run, "\n"), p.Snapshots.Retain
	return render("etcd-snapshots", "schedule etcd snapshots", anyFamily, d)
}
