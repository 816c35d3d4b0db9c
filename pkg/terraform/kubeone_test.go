package terraform

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/strict"
)

// The kubeone-*.json files are hand-written in the shape KubeOne's example Terraform
// configurations print (examples/terraform/{openstack,aws}/output.tf), not captured.
func TestKubeOneOutputs(t *testing.T) {
	tests := []struct {
		name, file, manifest string
		check                func(t *testing.T, c *v1beta1.Cluster, o *Output)
	}{
		{
			name: "openstack example: private hosts behind the bastion, a worker pool", file: "kubeone-openstack.json", manifest: "kind: Cluster",
			check: func(t *testing.T, c *v1beta1.Cluster, _ *Output) {
				h := c.ControlPlane.Hosts
				if len(h) != 3 || h[2].PublicAddress != "192.168.1.13" || h[2].PrivateAddress != "192.168.1.13" || h[2].Hostname != "demo-cp-2" || h[2].SSHUsername != "ubuntu" {
					t.Errorf("hosts %+v", h)
				}
				if h[0].Bastion == nil || h[0].Bastion.Address != "198.51.100.7" || h[0].Bastion.User != "ubuntu" || h[0].Bastion.Port != 22 {
					t.Errorf("bastion %+v", h[0].Bastion)
				}
				if c.Name != "demo" || c.CloudProvider.OpenStack == nil || c.APIEndpoint.Host != "198.51.100.7" {
					t.Errorf("name %q cloud %+v endpoint %+v", c.Name, c.CloudProvider, c.APIEndpoint)
				}
				if len(c.Workers) != 1 {
					t.Fatalf("workers %+v", c.Workers)
				}
				w := c.Workers[0]
				s := w.ProviderSpec.CloudProviderSpec
				if w.Name != "demo-pool1" || *w.Replicas != 1 || s.Flavor != "m1.small" || s.Image != "Ubuntu Noble 24.04" || s.FloatingIPPool != "public" ||
					s.SecurityGroups[0] != "demo-cluster" || s.Tags["demo-workers"] != "pool1" || w.ProviderSpec.OperatingSystem != "ubuntu" {
					t.Errorf("pool %+v", w)
				}
			},
		},
		{
			name: "the manifest wins for the pool fields it sets, as with KubeOne", file: "kubeone-openstack.json",
			manifest: "workers:\n- name: demo-pool1\n  replicas: 4\n  providerSpec:\n    cloudProviderSpec: {flavor: m1.large}\n    operatingSystem: debian\n",
			check: func(t *testing.T, c *v1beta1.Cluster, _ *Output) {
				w := c.Workers[0]
				if *w.Replicas != 4 || w.ProviderSpec.CloudProviderSpec.Flavor != "m1.large" || w.ProviderSpec.CloudProviderSpec.Image != "Ubuntu Noble 24.04" || w.ProviderSpec.OperatingSystem != "debian" {
					t.Errorf("pool %+v", w)
				}
			},
		},
		{
			name: "aws-shaped example: host keys, bastion key, leader, kubelet, labels, static workers", file: "kubeone-bastion-keys.json", manifest: "kind: Cluster",
			check: func(t *testing.T, c *v1beta1.Cluster, o *Output) {
				h := c.ControlPlane.Hosts
				if len(h) != 3 || !strings.HasPrefix(h[0].SSHHostPublicKey, "ssh-ed25519 AAAA") || !strings.HasPrefix(h[0].Bastion.HostPublicKey, "ssh-ed25519 AAAA") {
					t.Errorf("host keys %+v", h[0])
				}
				if h[0].IsLeader || !h[1].IsLeader || h[2].IsLeader {
					t.Errorf("leader_ip 10.0.2.10 must make the second host the leader: %v %v %v", h[0].IsLeader, h[1].IsLeader, h[2].IsLeader)
				}
				k := h[2].Kubelet
				if k.SystemReserved["memory"] != "200Mi" || k.KubeReserved["memory"] != "300Mi" || k.EvictionHard["nodefs.available"] != "10%" || *k.MaxPods != 110 {
					t.Errorf("kubelet %+v", k)
				}
				if h[1].Labels["topology.example.com/tier"] != "control" || c.CloudProvider.None == nil || c.Name != "edge" {
					t.Errorf("labels %v cloud %+v name %q", h[1].Labels, c.CloudProvider, c.Name)
				}
				if got := strings.Join(c.APIEndpoint.AlternativeNames, ","); c.APIEndpoint.Host != "api.demo.example.com" || got != "api.internal.example.com,10.0.0.100" {
					t.Errorf("endpoint %+v", c.APIEndpoint)
				}
				sw := c.StaticWorkers.Hosts
				if len(sw) != 2 || sw[1].PublicAddress != "10.0.2.20" || sw[1].Bastion.Address != "203.0.113.50" || sw[1].Taints != nil {
					t.Errorf("static workers %+v", sw)
				}
				if !strings.Contains(strings.Join(o.Warnings, "\n"), "kubeone_hosts.value.control_plane.operating_system: ignored") {
					t.Errorf("warnings %q", o.Warnings)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustLoad(t, tt.file)
			var c v1beta1.Cluster
			tree, err := strict.DecodeTree([]byte(tt.manifest), &c, nil)
			if err != nil {
				t.Fatal(err)
			}
			if errs := Merge(&c, tree, out); len(errs) > 0 {
				t.Fatal(errs)
			}
			tt.check(t, &c, out)
		})
	}
}

// kubeoneHosts is a kubeone_hosts output with the given control_plane fields.
func kubeoneHosts(fields string) string {
	return `{"kubeone_hosts": {"sensitive": false, "type": "object", "value": {"control_plane": {` + fields + `}}}}`
}

func TestKubeOneOutputErrors(t *testing.T) {
	tests := []struct {
		name, output, manifest, want string
	}{
		{"both sets of outputs", `{"slipway_api": {"value": {"endpoint": "a"}}, "kubeone_hosts": {"value": {"control_plane": {}}}}`, "",
			"both slipway's outputs (slipway_api) and KubeOne's (kubeone_hosts)"},
		{"unknown field", kubeoneHosts(`"private_address": ["10.0.0.1"], "ssh_usr": "ubuntu"`), "", `kubeone_hosts.value.control_plane.ssh_usr`},
		{"another cloud", kubeoneHosts(`"private_address": ["10.0.0.1"], "cloud_provider": "aws"`), "", `kubeone_hosts.value.control_plane.cloud_provider: Unsupported value: "aws"`},
		{"kubelet entry without =", kubeoneHosts(`"private_address": ["10.0.0.1"], "kubelet": {"system_reserved": "cpu:200m"}`), "",
			`kubeone_hosts.value.control_plane.kubelet.system_reserved: Invalid value: "cpu:200m": entry "cpu:200m" is not name=value`},
		{"leader that is no host", kubeoneHosts(`"private_address": ["10.0.0.1"], "leader_ip": "10.0.0.9"`), "", `kubeone_hosts.value.control_plane.leader_ip: Invalid value: "10.0.0.9"`},
		{"host key that is no key", kubeoneHosts(`"private_address": ["10.0.0.1"], "ssh_hosts_keys": ["bm90IGEga2V5"]`), "", `kubeone_hosts.value.control_plane.ssh_hosts_keys[0]`},
		{"list of the wrong length", kubeoneHosts(`"private_address": ["10.0.0.1", "10.0.0.2"], "hostnames": ["a"]`), "", `kubeone_hosts.value.control_plane.hostnames: Invalid value: "1 entry": must have one entry per private_address (2)`},
		{"hosts in both places", kubeoneHosts(`"private_address": ["10.0.0.1"]`), "controlPlane:\n  hosts: [{publicAddress: 10.0.0.2}]\n", `control-plane hosts are also in the Terraform output (kubeone_hosts.value.control_plane)`},
		{"name that differs", kubeoneHosts(`"private_address": ["10.0.0.1"], "cluster_name": "b"`), "name: a\n", `name: Invalid value: "a": differs from kubeone_hosts.value.control_plane.cluster_name "b"`},
		{"static worker group with a cluster field", `{"kubeone_static_workers": {"value": {"w": {"private_address": ["10.0.0.1"], "untaint": true}}}}`, "",
			`kubeone_static_workers.value[w].untaint: Forbidden`},
		{"worker pool with a secret reference", `{"kubeone_workers": {"value": {"p": {"replicas": 1, "providerSpec": {"operatingSystem": "ubuntu", "cloudProviderSpec": {"flavor": {"secretKeyRef": {"name": "x"}}}}}}}}`, "",
			`kubeone_workers.value[p].providerSpec.cloudProviderSpec.flavor`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Parse([]byte(tt.output))
			if err == nil {
				var c v1beta1.Cluster
				tree, derr := strict.DecodeTree([]byte("kind: Cluster\n"+tt.manifest), &c, nil)
				if derr != nil {
					t.Fatal(derr)
				}
				if errs := Merge(&c, tree, out); len(errs) > 0 {
					err = errs.ToAggregate()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
