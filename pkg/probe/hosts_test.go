package probe

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// report is what the probe script prints on a host; fields override the defaults of a fresh
// Debian host.
func report(fields map[string]string) string {
	facts := map[string]string{
		"os_id": "debian", "os_version_id": "12", "arch": "x86_64", "kernel": "6.1.0", "hostname": "host",
		"swap_active": "false", "cgroup_version": "2", "sudo_ok": "true", "privileged": "true",
		"containerd_version": "", "containerd_active": "false", "kubelet_active": "false", "admin_conf": "false",
		"kubelet_conf": "false", "etcd_data": "false", "resolv_loopback": "false",
	}
	for k, v := range fields {
		facts[k] = v
	}
	var b strings.Builder
	for k, v := range facts {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	return b.String()
}

// fleetOf returns the manifest's nodes for n hosts (one control plane, the rest static
// workers), addressed 10.0.0.1…, every other one without a hostname in the manifest, and a
// fake fleet for them.
func fleetOf(n int) ([]*inventory.Node, *sshtest.Fleet) {
	c := &v1beta1.Cluster{Name: "unit"}
	for i := range n {
		h := v1beta1.Host{PublicAddress: fmt.Sprintf("10.0.0.%d", i+1), PrivateAddress: fmt.Sprintf("192.168.0.%d", i+1)}
		if i%2 == 1 {
			h.Hostname = fmt.Sprintf("named-%d", i+1)
		}
		if i == 0 {
			h.IsLeader = true
			c.ControlPlane.Hosts = append(c.ControlPlane.Hosts, h)
		} else {
			c.StaticWorkers.Hosts = append(c.StaticWorkers.Hosts, h)
		}
	}
	return inventory.Nodes(c), &sshtest.Fleet{}
}

// TestHostsProbesConcurrently probes nine hosts through the recording fake, each holding its
// probe until as many hosts as allowed are in flight: the probe must reach that many at once and
// never more, hear every host, and settle names without touching the nodes it was given.
func TestHostsProbesConcurrently(t *testing.T) {
	const hosts = 9
	for _, tt := range []struct {
		name     string
		parallel int
		want     int32
	}{
		{"bounded by --parallel", 4, 4},
		{"every host at once under the default bound", 0, hosts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nodes, fleet := fleetOf(hosts)
			var inFlight, peak atomic.Int32
			gate := make(chan struct{})
			var open sync.Once
			hold := func(ctx context.Context) error {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if n >= tt.want {
					open.Do(func() { close(gate) })
				}
				// The deadline only matters when the probe runs fewer hosts at once than it may.
				select {
				case <-gate:
				case <-time.After(5 * time.Second):
				case <-ctx.Done():
					return ctx.Err()
				}
				return nil
			}
			for i, n := range nodes {
				fleet.Get(n.Target.String()).
					On(`^script probe$`, sshtest.Response{Stdout: report(map[string]string{"hostname": fmt.Sprintf("Host-%d", i+1)}), Hold: hold}).
					On(`^script 'read slipway records'$`, sshtest.Response{Stdout: fmt.Sprintf("hash-%d\n", i+1)})
			}
			before := make([]inventory.Node, len(nodes))
			for i, n := range nodes {
				before[i] = *n
			}

			o, err := Hosts(context.Background(), Input{Nodes: nodes, SSH: fleet, Parallel: tt.parallel})
			if err != nil {
				t.Fatal(err)
			}
			if peak.Load() != tt.want {
				t.Errorf("%d hosts probed at once, want %d", peak.Load(), tt.want)
			}
			for i, n := range nodes {
				if !reflect.DeepEqual(*n, before[i]) {
					t.Errorf("the probe changed the node it was given: %+v, was %+v", *n, before[i])
				}
				if got := fleet.Get(n.Target.String()).Commands(); len(got) != 2 {
					t.Errorf("%s received %q, want the probe and the prerequisites record", n.Target, got)
				}
			}
			if len(o.Nodes) != hosts || len(o.State.Hosts) != hosts || len(o.Facts) != hosts {
				t.Fatalf("observed %d nodes, %d host states, %d facts; want %d each", len(o.Nodes), len(o.State.Hosts), len(o.Facts), hosts)
			}
			for i, n := range o.Nodes {
				want := fmt.Sprintf("host-%d", i+1) // the host's own name, lowercased
				if nodes[i].Host.Hostname != "" {
					want = nodes[i].Host.Hostname
				}
				if n.Name != want || n.Provisional || o.State.Hosts[i].Name != want || o.Facts[want].Hostname != fmt.Sprintf("Host-%d", i+1) {
					t.Errorf("host %d observed as %q (provisional %t, state %q), want %q", i, n.Name, n.Provisional, o.State.Hosts[i].Name, want)
				}
				if got := o.State.Hosts[i].PrereqHash; got != fmt.Sprintf("hash-%d", i+1) {
					t.Errorf("%s: prerequisites hash %q", want, got)
				}
			}
		})
	}
}

func TestHostsReportsEveryBadHost(t *testing.T) {
	nodes, fleet := fleetOf(4)
	// The first matching rule answers.
	fleet.Get(nodes[1].Target.String()).On(`^script probe$`, sshtest.Response{Stdout: report(map[string]string{"os_id": "plan9"})})
	fleet.Get(nodes[3].Target.String()).On(`^script probe$`, sshtest.Response{Stderr: "Permission denied\n", ExitStatus: 255})
	for _, n := range nodes {
		fleet.Get(n.Target.String()).On(`^script probe$`, sshtest.Response{Stdout: report(map[string]string{"hostname": n.Target.Address})})
	}
	_, err := Hosts(context.Background(), Input{Nodes: nodes, SSH: fleet, Parallel: 2})
	if err == nil {
		t.Fatal("bad hosts were accepted")
	}
	for _, want := range []string{"nothing was changed", `named-2: unsupported operating system "plan9"`, "running script probe on named-4: exit status 255"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestHostsRefusesTwoHostsWithOneName(t *testing.T) {
	nodes, fleet := fleetOf(3)
	for _, n := range nodes {
		fleet.Get(n.Target.String()).On(`^script probe$`, sshtest.Response{Stdout: report(map[string]string{"hostname": "twin"})})
	}
	_, err := Hosts(context.Background(), Input{Nodes: nodes, SSH: fleet})
	if err == nil || !strings.Contains(err.Error(), `hosts 10.0.0.1 and 10.0.0.3 both have the node name "twin"`) {
		t.Fatalf("got %v", err)
	}
}

// TestAllWithoutACluster: hosts without an admin kubeconfig mean no cluster, and the probe
// does not look for one.
func TestAllWithoutACluster(t *testing.T) {
	nodes, fleet := fleetOf(2)
	for _, n := range nodes {
		fleet.Get(n.Target.String()).On(`^script probe$`, sshtest.Response{Stdout: report(map[string]string{"hostname": n.Target.Address})})
	}
	o, err := All(context.Background(), Input{Nodes: nodes, SSH: fleet, API: access.New(nodes, fleet, v1beta1.APIEndpoint{})})
	if err != nil {
		t.Fatal(err)
	}
	if o.State.Cluster.Exists || len(o.State.Cluster.Nodes) != 0 {
		t.Errorf("cluster state %+v, want none", o.State.Cluster)
	}
	for _, n := range nodes {
		for _, c := range fleet.Get(n.Target.String()).Commands() {
			if strings.HasPrefix(c, "download") {
				t.Errorf("%s: the probe looked for a cluster: %s", n.Target, c)
			}
		}
	}
}
