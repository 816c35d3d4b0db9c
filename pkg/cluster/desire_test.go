package cluster

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// TestDesirePrereqRecords: each host's prerequisites record is salted with the salt the host
// already holds, so an unchanged script matches the record (nothing to do) and a host without
// one, or with an older unsalted one, gets a new salt.
func TestDesirePrereqRecords(t *testing.T) {
	c := testCluster(t, "10.0.0.1", "10.0.0.2")
	nodes := inventory.Nodes(c)
	facts := map[string]scripts.Facts{}
	for _, n := range nodes {
		facts[n.Name] = scripts.Facts{OS: scripts.OS{ID: "debian", VersionID: "12"}, Arch: "x86_64"}
	}
	observe := func(records map[string]string) *probe.Observed {
		o := &probe.Observed{Nodes: nodes, Facts: facts}
		for _, n := range nodes {
			o.State.Hosts = append(o.State.Hosts, plan.HostState{Name: n.Name, PrereqHash: records[n.Name]})
		}
		return o
	}
	first, err := Desire(c, inputs(t, c), observe(map[string]string{"10.0.0.2": "0fda9be9f1f3934a"}), false)
	if err != nil {
		t.Fatal(err)
	}
	records := first.Rendered.PrereqRecords
	a, b := records["10.0.0.1"], records["10.0.0.2"]
	if applied.HostRecordSalt(a) == "" || applied.HostRecordSalt(b) == "" || applied.HostRecordSalt(a) == applied.HostRecordSalt(b) {
		t.Fatalf("records %q and %q: want a salt of each host's own", a, b)
	}
	second, err := Desire(c, inputs(t, c), observe(records), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range second.Plan.Hosts {
		if h.PrereqHash != records[h.Name] {
			t.Errorf("%s: record %q for an unchanged script, want the one it holds, %q", h.Name, h.PrereqHash, records[h.Name])
		}
		if strings.Contains(h.PrereqHash, "0fda9be9f1f3934a") {
			t.Errorf("%s kept an unsalted record", h.Name)
		}
	}
}

// TestDesireSnapshotRecords: the record of the scheduled snapshots' set-up, which holds the S3
// access key, is salted as the prerequisites record is: with the control plane's own salt, so
// that an unchanged set-up matches it and a changed key does not, and never the bare hash of the
// script that an older slipway recorded.
func TestDesireSnapshotRecords(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	c.Etcd.Snapshots = &v1beta1.EtcdSnapshots{Schedule: "@daily", Retain: 3,
		S3: &v1beta1.SnapshotS3{Endpoint: "https://s3.example.com", Bucket: "backups", Region: "us-east-1"}}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-one")
	nodes := inventory.Nodes(c)
	observe := func(record string) *probe.Observed {
		return &probe.Observed{Nodes: nodes, Facts: map[string]scripts.Facts{nodes[0].Name: {OS: scripts.OS{ID: "debian", VersionID: "12"}, Arch: "x86_64"}},
			State: plan.Observed{Hosts: []plan.HostState{{Name: nodes[0].Name, SnapshotsHash: record}}}}
	}
	unsalted := applied.Hash([]byte("an older slipway's record"))
	first, err := Desire(c, inputs(t, c), observe(unsalted), false)
	if err != nil {
		t.Fatal(err)
	}
	record := first.Rendered.SnapshotRecords[nodes[0].Name]
	if applied.HostRecordSalt(record) == "" || first.Plan.Hosts[0].SnapshotsHash != record {
		t.Fatalf("record %q (plan %q): want a salted one", record, first.Plan.Hosts[0].SnapshotsHash)
	}
	if want := applied.Hash([]byte(first.Rendered.SnapshotScripts[nodes[0].Name])); strings.Contains(record, want) {
		t.Errorf("record %q holds the bare hash of the set-up", record)
	}
	again, err := Desire(c, inputs(t, c), observe(record), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Plan.Hosts[0].SnapshotsHash; got != record {
		t.Errorf("record %q for an unchanged set-up, want the one the host holds, %q", got, record)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-two")
	changed, err := Desire(c, inputs(t, c), observe(record), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := changed.Plan.Hosts[0].SnapshotsHash; got == record || applied.HostRecordSalt(got) != applied.HostRecordSalt(record) {
		t.Errorf("a changed key gave record %q; want another under the same salt than %q", got, record)
	}
}
