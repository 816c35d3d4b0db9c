package phases

import (
	"context"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// TestEtcdSnapshotsRecord: the etcd-snapshots phase runs the control plane's set-up and then
// writes its record root-only (the set-up it hashes holds the S3 access key), or with no record
// removes it.
func TestEtcdSnapshotsRecord(t *testing.T) {
	c := &v1beta1.Cluster{ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", Hostname: "cp"}}}}
	nodes := inventory.Nodes(c)
	const record = "00112233445566778899aabbccddeeff:0000000000000000000000000000000000000000000000000000000000000000"
	for name, tc := range map[string]struct{ record, want string }{
		"scheduled": {record, "script etcd-snapshots; upload " + scripts.SnapshotRecord},
		"stopped":   {"", "script etcd-snapshots; rm -f " + scripts.SnapshotRecord},
	} {
		fleet := &sshtest.Fleet{}
		r := NewRun(Config{Manifest: c, Nodes: nodes, SSH: fleet, Rendered: Rendered{
			SnapshotScripts: map[string]string{"cp": "echo set-up\n"}, SnapshotRecords: map[string]string{"cp": tc.record}}})
		if err := etcdSnapshots(context.Background(), r, "cp"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := fleet.Get(nodes[0].Target.String())
		if got := strings.Join(h.Commands(), "; "); got != tc.want {
			t.Errorf("%s: ran %q, want %q", name, got, tc.want)
		}
		if tc.record == "" {
			continue
		}
		if f, ok := h.File(scripts.SnapshotRecord); !ok || string(f.Data) != record+"\n" || f.Owner != "root" || f.Mode != 0o600 {
			t.Errorf("%s: the record is %q owned by %q, mode %o; want it root-only", name, f.Data, f.Owner, f.Mode)
		}
	}
}
