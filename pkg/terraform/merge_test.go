package terraform

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/strict"
)

func mustLoad(t *testing.T, file string) *Output {
	t.Helper()
	o, err := Load(context.Background(), "testdata/"+file, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		wantErr  []string
		check    func(t *testing.T, c *v1beta1.Cluster)
	}{
		{
			name:     "terraform supplies hosts, endpoint, name and cloud",
			manifest: "kind: Cluster",
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.Name != "full" || c.CloudProvider.OpenStack == nil {
					t.Errorf("name %q cloud %+v", c.Name, c.CloudProvider)
				}
				h := c.ControlPlane.Hosts
				if len(h) != 3 || h[1].PrivateAddress != "192.168.0.12" || h[1].Hostname != "cp-2" || h[1].SSHPort != 2222 || h[1].SSHHostPublicKey == "" {
					t.Errorf("control plane hosts %+v", h)
				}
				if h[0].Bastion == nil || h[0].Bastion.Address != "203.0.113.1" || h[0].Bastion.User != "jump" {
					t.Errorf("bastion %+v", h[0].Bastion)
				}
				if h[0].Labels["zone"] != "a" || h[0].Taints[0].Key != "dedicated" {
					t.Errorf("labels %v taints %v", h[0].Labels, h[0].Taints)
				}
				if c.APIEndpoint.Host != "lb.example.com" || c.APIEndpoint.AlternativeNames[0] != "10.0.0.5" {
					t.Errorf("endpoint %+v", c.APIEndpoint)
				}
				sw := c.StaticWorkers.Hosts
				if len(sw) != 2 || sw[0].PublicAddress != "10.0.1.1" {
					t.Errorf("static workers must come in group-name order: %+v", sw)
				}
			},
		},
		{
			name: "manifest wins for the worker fields it sets",
			manifest: `workers:
- name: pool1
  replicas: 5
  providerSpec:
    cloudProviderSpec: {flavor: m1.xlarge, tags: {b: manifest, c: manifest}, securityGroups: [m-sg]}
    operatingSystem: ubuntu
- name: pool3
  providerSpec: {cloudProviderSpec: {flavor: f, image: i}, operatingSystem: debian}`,
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if len(c.Workers) != 3 || c.Workers[0].Name != "pool1" || c.Workers[1].Name != "pool3" || c.Workers[2].Name != "pool2" {
					t.Fatalf("pools must keep manifest order, then terraform-only pools: %+v", c.Workers)
				}
				p := c.Workers[0]
				cs := p.ProviderSpec.CloudProviderSpec
				if *p.Replicas != 5 || cs.Flavor != "m1.xlarge" || cs.Image != "ubuntu" {
					t.Errorf("pool1 %+v %+v", p, cs)
				}
				if cs.Tags["a"] != "tf" || cs.Tags["b"] != "manifest" || cs.Tags["c"] != "manifest" {
					t.Errorf("maps must merge key by key: %v", cs.Tags)
				}
				if len(cs.SecurityGroups) != 1 || cs.SecurityGroups[0] != "m-sg" {
					t.Errorf("lists must be replaced whole: %v", cs.SecurityGroups)
				}
			},
		},
		{
			name:     "hosts in both places",
			manifest: "controlPlane: {hosts: [{publicAddress: 10.9.9.9}]}\nstaticWorkers: {hosts: [{publicAddress: 10.9.9.8}]}",
			wantErr:  []string{"controlPlane.hosts: Forbidden", "staticWorkers.hosts: Forbidden"},
		},
		{
			name:     "conflicting identity and endpoint",
			manifest: "name: other\ncloudProvider: {none: {}}\napiEndpoint: {host: other.example.com}",
			wantErr: []string{
				`name: Invalid value: "other": differs from slipway_hosts.value.control_plane.cluster_name "full"`,
				`cloudProvider.none: Invalid value`,
				`apiEndpoint.host: Invalid value: "other.example.com"`,
			},
		},
		{
			name:     "same endpoint in both places is fine",
			manifest: "apiEndpoint: {host: lb.example.com, alternativeNames: [10.0.0.5, extra.example.com]}",
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if n := c.APIEndpoint.AlternativeNames; len(n) != 2 {
					t.Errorf("alternative names must be merged without duplicates: %v", n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := merged(t, tt.manifest, "output-full.json")
			if len(tt.wantErr) > 0 {
				wantErrors(t, errs, tt.wantErr)
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			tt.check(t, c)
		})
	}
}

// merged decodes manifest and merges testdata/file into it.
func merged(t *testing.T, manifest, file string) (*v1beta1.Cluster, field.ErrorList) {
	t.Helper()
	var c v1beta1.Cluster
	tree, err := strict.DecodeTree([]byte(manifest), &c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &c, Merge(&c, tree, mustLoad(t, file))
}

// wantErrors fails unless errs holds every message in wants.
func wantErrors(t *testing.T, errs field.ErrorList, wants []string) {
	t.Helper()
	msg := errs.ToAggregate()
	if msg == nil {
		t.Fatal("expected errors")
	}
	for _, w := range wants {
		if !strings.Contains(msg.Error(), w) {
			t.Errorf("errors %q do not contain %q", msg, w)
		}
	}
}

func TestMergeRejectsMismatchedLists(t *testing.T) {
	o, err := Parse([]byte(`{"slipway_hosts": {"value": {"control_plane": {"public_address": ["a", "b"], "hostnames": ["x"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var c v1beta1.Cluster
	errs := Merge(&c, nil, o)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "slipway_hosts.value.control_plane.hostnames") {
		t.Fatalf("got %v", errs)
	}
}
