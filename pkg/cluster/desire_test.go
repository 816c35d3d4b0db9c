package cluster

import (
	"strings"
	"testing"

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
	if applied.PrereqSalt(a) == "" || applied.PrereqSalt(b) == "" || applied.PrereqSalt(a) == applied.PrereqSalt(b) {
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
