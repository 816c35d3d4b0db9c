package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadWithTerraformHosts runs the whole pipeline (merge, defaults, validation) on the real
// `terraform output -json` captures of pkg/terraform: control planes with private addresses
// only (reached through the bastion) and with public and private addresses load, and lists
// that do not line up are a config error naming each list.
func TestLoadWithTerraformHosts(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: slipway.dev/v1beta1\nkind: Cluster\nversions: {kubernetes: v1.36.3}\ncloudProvider: {external: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type host struct{ dial, private, bastion string }
	tests := []struct {
		capture string
		want    []host
		wantErr []string
	}{
		{capture: "private-only", want: []host{
			{"10.0.1.11", "10.0.1.11", "203.0.113.2"}, {"10.0.1.12", "10.0.1.12", "203.0.113.2"}, {"10.0.1.13", "10.0.1.13", "203.0.113.2"}}},
		{capture: "public-private", want: []host{
			{"198.51.100.11", "10.0.1.11", ""}, {"198.51.100.12", "10.0.1.12", ""}, {"198.51.100.13", "10.0.1.13", ""}}},
		{capture: "mismatched", wantErr: []string{
			"slipway_hosts.value.control_plane.private_address: Invalid value: \"2 entries\": must have one entry per public_address (3)",
			"slipway_hosts.value.control_plane.ssh_host_keys: Invalid value: \"1 entry\": must have one entry per public_address (3)"}},
		{capture: "private-mismatched", wantErr: []string{
			"slipway_hosts.value.control_plane.hostnames: Invalid value: \"2 entries\": must have one entry per private_address (3)"}},
		{capture: "no-hosts", wantErr: []string{
			"slipway_hosts.value.control_plane.public_address: Required value: the control plane has no hosts"}},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			// The captures belong to pkg/terraform, which proves them real (TestCaptures).
			tf := filepath.Join("..", "terraform", "testdata", "output-"+tt.capture+".json")
			res, err := Load(context.Background(), Options{ManifestPath: manifest, TerraformSource: tf})
			if len(tt.wantErr) > 0 {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("got %v, want a *config.Error", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error does not contain %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []host
			for _, h := range res.Cluster.ControlPlane.Hosts {
				b := ""
				if h.Bastion != nil {
					b = h.Bastion.Address
				}
				got = append(got, host{h.PublicAddress, h.PrivateAddress, b})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("hosts %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("host %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
