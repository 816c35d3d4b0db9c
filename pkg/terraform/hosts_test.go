package terraform

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/test/golden"
)

// TestCaptures: each testdata/output-<name>.json is what the real terraform prints for
// `terraform output -json` of testdata/capture/<name>/main.tf, byte for byte (-update rewrites
// them from the real terraform; `make golden` does too), so the contract's tests read the shapes
// that Terraform really writes.
func TestCaptures(t *testing.T) {
	dirs, err := filepath.Glob("testdata/capture/*")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("capture configurations: %v %v", dirs, err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, "main.tf"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			work := applied(t, ctx, src)
			cmd := exec.CommandContext(ctx, "terraform", "output", "-json", "-no-color")
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("terraform output -json: %v", err)
			}
			golden.Check(t, filepath.Join("testdata", "output-"+name+".json"), got)
		})
	}
}

// host is what a merged host is made of: the address slipway dials, the cluster's address,
// the Node name and the pinned host key.
type host struct{ dial, private, name, key string }

const hostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHeagoWhp+qCo6N6quw4QUZuInitGyf+xLCR3ldL1yGx"

// TestMergeHosts covers the host lists of the contract on real captures: private addresses
// only (reached through the bastion), public and private addresses, lists that do not line up
// (each named in the error), and no hosts at all.
func TestMergeHosts(t *testing.T) {
	key := hostKey
	tests := []struct {
		file     string
		manifest string
		// want are the hosts after merging and defaulting; bastion whether they have one.
		want    []host
		workers []host
		bastion string
		wantErr []string
	}{
		{
			file: "output-private-only.json",
			want: []host{
				{"10.0.1.11", "10.0.1.11", "private-cp-1", key},
				{"10.0.1.12", "10.0.1.12", "private-cp-2", key},
				{"10.0.1.13", "10.0.1.13", "private-cp-3", key},
			},
			workers: []host{{"10.0.1.21", "10.0.1.21", "private-edge-1", ""}, {"10.0.1.22", "10.0.1.22", "private-edge-2", ""}},
			bastion: "203.0.113.2",
		},
		{
			file: "output-public-private.json",
			want: []host{
				{"198.51.100.11", "10.0.1.11", "public-cp-1", ""},
				{"198.51.100.12", "10.0.1.12", "public-cp-2", ""},
				{"198.51.100.13", "10.0.1.13", "public-cp-3", ""},
			},
		},
		{
			file: "output-mismatched.json",
			wantErr: []string{
				`slipway_hosts.value.control_plane.private_address: Invalid value: "2 entries": must have one entry per public_address (3)`,
				`slipway_hosts.value.control_plane.ssh_host_keys: Invalid value: "1 entry": must have one entry per public_address (3)`,
			},
		},
		{
			file: "output-private-mismatched.json",
			wantErr: []string{
				`slipway_hosts.value.control_plane.hostnames: Invalid value: "2 entries": must have one entry per private_address (3)`,
			},
		},
		{
			file: "output-no-hosts.json",
			wantErr: []string{"slipway_hosts.value.control_plane.public_address: Required value: the control plane has no hosts: " +
				"list their addresses in public_address or, for hosts reached only through the bastion, in private_address"},
		},
		{
			// Hosts in the manifest, and a Terraform control plane that only names the cluster.
			file:     "output-no-hosts.json",
			manifest: "controlPlane: {hosts: [{publicAddress: 10.9.9.9, sshPrivateKeyFile: /k}]}",
			want:     []host{{"10.9.9.9", "10.9.9.9", "", ""}},
		},
		{
			file:     "output-private-only.json",
			manifest: "controlPlane: {hosts: [{publicAddress: 10.9.9.9}]}",
			wantErr:  []string{"controlPlane.hosts: Forbidden: control-plane hosts are also in the Terraform output"},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".json")+map[bool]string{true: "+manifest"}[tt.manifest != ""], func(t *testing.T) {
			c, errs := merged(t, "kind: Cluster\n"+tt.manifest, tt.file)
			if len(tt.wantErr) > 0 {
				if len(errs) != len(tt.wantErr) {
					t.Errorf("got %d errors, want %d: %v", len(errs), len(tt.wantErr), errs)
				}
				wantErrors(t, errs, tt.wantErr)
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			v1beta1.SetDefaults(c, "test")
			check(t, "control plane", c.ControlPlane.Hosts, tt.want, tt.bastion)
			check(t, "static workers", c.StaticWorkers.Hosts, tt.workers, tt.bastion)
		})
	}
}

func check(t *testing.T, what string, hosts []v1beta1.Host, want []host, bastion string) {
	t.Helper()
	var got []host
	for _, h := range hosts {
		got = append(got, host{h.PublicAddress, h.PrivateAddress, h.Hostname, h.SSHHostPublicKey})
		switch {
		case bastion == "" && h.Bastion != nil:
			t.Errorf("%s host %s has a bastion %+v, want none", what, h.PublicAddress, h.Bastion)
		case bastion != "" && (h.Bastion == nil || h.Bastion.Address != bastion || h.Bastion.HostPublicKey != hostKey):
			t.Errorf("%s host %s has the bastion %+v, want %s with its pinned key", what, h.PublicAddress, h.Bastion, bastion)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: hosts %+v, want %+v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s host %d: %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// TestMergeHostsPerEntry: within public_address, an empty entry is a host without a public
// address, dialled at its private one; a host with neither is an error naming its index.
func TestMergeHostsPerEntry(t *testing.T) {
	for _, tt := range []struct {
		name, group string
		want        []string // dialled addresses
		wantErr     string
	}{
		{"mixed", `"public_address": ["198.51.100.1", ""], "private_address": ["10.0.0.1", "10.0.0.2"]`, []string{"198.51.100.1", "10.0.0.2"}, ""},
		{"neither", `"public_address": ["198.51.100.1", ""]`, nil, `slipway_hosts.value.control_plane.public_address[1]: Required value: host 2 has neither a public nor a private address`},
		{"empty private", `"private_address": ["10.0.0.1", ""]`, nil, `slipway_hosts.value.control_plane.private_address[1]: Required value`},
		{"hostnames without hosts", `"hostnames": ["a"]`, nil, `slipway_hosts.value.control_plane.hostnames: Invalid value: "1 entry": but neither public_address nor private_address lists a host`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse([]byte(`{"slipway_hosts": {"value": {"control_plane": {` + tt.group + `}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			var c v1beta1.Cluster
			errs := Merge(&c, nil, o)
			if tt.wantErr != "" {
				if agg := errs.ToAggregate(); agg == nil || !strings.Contains(agg.Error(), tt.wantErr) {
					t.Fatalf("errors %v, want %q", agg, tt.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			var got []string
			for _, h := range c.ControlPlane.Hosts {
				got = append(got, h.PublicAddress)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("dialled %v, want %v", got, tt.want)
			}
		})
	}
}
