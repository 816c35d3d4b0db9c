package kubeadm_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

const haEtcdServers = "https://10.0.0.11:2379,https://10.0.0.12:2379,https://10.0.0.13:2379"

func TestPatchClusterConfig(t *testing.T) {
	ha, single := load(t, "ha"), load(t, "single")
	const head = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: prod\n"
	cases := []struct {
		name, in string
		single   bool
		// changed is whether the document must change; then want is the apiServer.extraArgs
		// it must have afterwards, as YAML.
		changed bool
		want    string
		err     string
	}{
		{name: "no apiServer", in: head, changed: true,
			want: "- name: etcd-servers\n  value: " + haEtcdServers + "\n"},
		{name: "v1beta4 list without it", in: head + "apiServer:\n  extraArgs:\n  - name: service-node-port-range\n    value: 30000-32767\n", changed: true,
			want: "- name: service-node-port-range\n  value: 30000-32767\n- name: etcd-servers\n  value: " + haEtcdServers + "\n"},
		{name: "v1beta4 list with another value", in: head + "apiServer:\n  extraArgs:\n  - name: etcd-servers\n    value: https://127.0.0.1:2379\n", changed: true,
			want: "- name: etcd-servers\n  value: " + haEtcdServers + "\n"},
		{name: "v1beta4 list already right", in: head + "apiServer:\n  extraArgs:\n  - name: etcd-servers\n    value: " + haEtcdServers + "\n"},
		{name: "v1beta3 map", in: strings.Replace(head, "v1beta4", "v1beta3", 1) + "apiServer:\n  extraArgs:\n    audit-log-maxage: \"30\"\n", changed: true,
			want: "audit-log-maxage: \"30\"\netcd-servers: " + haEtcdServers + "\n"},
		{name: "one control plane is left alone", in: head, single: true},
		{name: "not a ClusterConfiguration", in: "apiVersion: v1\nkind: KubeletConfiguration\n", err: `"KubeletConfiguration", not a ClusterConfiguration`},
		{name: "extraArgs of another shape", in: head + "apiServer:\n  extraArgs: 3\n", err: "neither a list nor a map"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ha
			if tc.single {
				c = single
			}
			out, changed, err := kubeadm.PatchClusterConfig([]byte(tc.in), c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Fatalf("changed = %t, want %t; out:\n%s", changed, tc.changed, out)
			}
			if !changed {
				if string(out) != tc.in {
					t.Fatalf("unchanged document rewritten:\n%s", out)
				}
				return
			}
			var doc struct {
				ClusterName string `json:"clusterName"`
				APIServer   struct {
					ExtraArgs any `json:"extraArgs"`
				} `json:"apiServer"`
			}
			if err := yaml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.ClusterName != "prod" {
				t.Errorf("clusterName lost: %s", out)
			}
			got, err := yaml.Marshal(doc.APIServer.ExtraArgs)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("extraArgs =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
