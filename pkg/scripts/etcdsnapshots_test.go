package scripts_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestEtcdSnapshotsGolden(t *testing.T) {
	s, err := scripts.EtcdSnapshots(&scripts.SnapshotParams{Node: "cp-1", Image: "registry.k8s.io/etcd:3.6.6-0",
		Snapshots: v1beta1.EtcdSnapshots{Schedule: "0 */6 * * 1-5", Retain: 7}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "etcd-snapshots", s)
	for _, want := range []string{"OnCalendar=Mon,Tue,Wed,Thu,Fri *-*-* 00,06,12,18:00:00 UTC", "head -n -7", "'registry.k8s.io/etcd:3.6.6-0'", "node='cp-1'"} {
		if !strings.Contains(s, want) {
			t.Errorf("the set-up lacks %q", want)
		}
	}
	off, err := scripts.EtcdSnapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "etcd-snapshots-off", off)
	if strings.Contains(off, scripts.SnapshotDir+"'") || strings.Contains(off, "remove_path '"+scripts.SnapshotDir) {
		t.Error("stopping the snapshots removes the snapshots taken")
	}
}

func TestEtcdSnapshotsRefusesBadValues(t *testing.T) {
	for name, p := range map[string]scripts.SnapshotParams{
		"a schedule cron cannot read": {Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "every day", Retain: 1}},
		"nothing kept":                {Node: "cp-1", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 0}},
		"a line break in the node":    {Node: "cp-1\nrm -rf /", Image: "etcd:1", Snapshots: v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 1}},
	} {
		if s, err := scripts.EtcdSnapshots(&p); err == nil {
			t.Errorf("%s: rendered\n%s", name, s)
		}
	}
}
