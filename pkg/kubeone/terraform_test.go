package kubeone_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kubeone"
)

// kubeoneOutput is KubeOne's OpenStack Terraform output: cluster_name demo, cloud_provider
// openstack, the endpoint 198.51.100.7, three control planes, a worker pool.
const kubeoneOutput = "../terraform/testdata/kubeone-openstack.json"

// TestConvertWithKubeOneTerraform: the KubeOneCluster manifests KubeOne accepts with its
// Terraform output (the cloud, the name, the endpoint and the hosts left to the output, or
// written in the manifest where KubeOne takes the output's instead) convert into manifests that
// load with that same output, each difference named in a warning; what slipway cannot take from
// both places is an error naming the field.
func TestConvertWithKubeOneTerraform(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock") // the output's hosts use the agent
	tf, err := config.LoadTerraform(context.Background(), kubeoneOutput, nil)
	if err != nil {
		t.Fatal(err)
	}
	head := "apiVersion: kubeone.k8c.io/v1beta3\nkind: KubeOneCluster\nversions: {kubernetes: " + version + "}\n" +
		"features: {metricsServer: {enable: false}, nodeLocalDNS: {deploy: false}}\nclusterNetwork: {cni: {canal: {}}}\n"
	tests := []struct {
		name     string
		body     string
		warnings []string
		check    func(t *testing.T, c *v1beta1.Cluster)
	}{
		{"the cloud is the output's, external the manifest's (the usual shape)", "cloudProvider: {external: true}\n",
			[]string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers"}, nil},
		{"no cloud at all: OpenStack from the output, with the external cloud-controller-manager", "",
			[]string{"clusterNetwork.cni.canal.mtu", "cloudProvider.external", "cloudProvider.disableBundledCSIDrivers"}, nil},
		{"the cloud named in both", "cloudProvider: {openstack: {}, external: true}\n", []string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers"}, nil},
		{"a name the output's cluster_name overrides", "name: old-name\ncloudProvider: {external: true}\n",
			[]string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers", "name"}, nil},
		{"the same name in both", "name: demo\ncloudProvider: {external: true}\n", []string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers"}, nil},
		{"hosts and an endpoint the output replaces", `cloudProvider: {external: true}
apiEndpoint: {host: lb.old.example, port: 6443}
controlPlane:
  hosts: [{publicAddress: 203.0.113.5, sshUsername: ubuntu}]
`, []string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers", "apiEndpoint.host", "controlPlane.hosts"},
			func(t *testing.T, c *v1beta1.Cluster) {
				if c.APIEndpoint.Host != "198.51.100.7" || c.APIEndpoint.Port != 6443 || len(c.ControlPlane.Hosts) != 3 {
					t.Errorf("endpoint %+v, %d control planes", c.APIEndpoint, len(c.ControlPlane.Hosts))
				}
			}},
		{"a pool in both, its region carried over", `cloudProvider: {external: true}
dynamicWorkers:
  - name: demo-pool1
    replicas: 3
    providerSpec: {operatingSystem: ubuntu, cloudProviderSpec: {flavor: m1.large, region: RegionTwo}}
`, []string{"clusterNetwork.cni.canal.mtu", "cloudProvider.disableBundledCSIDrivers"},
			func(t *testing.T, c *v1beta1.Cluster) {
				s := c.Workers[0].ProviderSpec.CloudProviderSpec
				if len(c.Workers) != 1 || *c.Workers[0].Replicas != 3 || s.Flavor != "m1.large" || s.Image != "Ubuntu Noble 24.04" || s.Region != "RegionTwo" {
					t.Errorf("pool %+v", c.Workers)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := kubeone.Convert([]byte(head+tt.body), tf.ForKubeOne())
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, w := range res.Warnings {
				paths = append(paths, w.Path)
			}
			if !slices.Equal(paths, tt.warnings) {
				t.Errorf("warnings:\n got %q\nwant %q", paths, tt.warnings)
			}
			manifest, err := res.Manifest("kubeone.yaml")
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := config.Load(context.Background(), config.Options{ManifestPath: "-", Stdin: bytes.NewReader(manifest), TerraformSource: kubeoneOutput})
			if err != nil {
				t.Fatalf("the converted manifest does not load with KubeOne's Terraform output: %v\n%s", err, manifest)
			}
			c := loaded.Cluster
			if c.Name != "demo" || c.CloudProvider.OpenStack == nil || !c.CloudProvider.External {
				t.Errorf("name %q, cloud %+v: want demo on OpenStack with the external cloud-controller-manager", c.Name, c.CloudProvider)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}

	// KubeOne adds the output's static workers to the manifest's; slipway takes them from one
	// place, so the conversion refuses, naming the field.
	withWorkers := filepath.Join(t.TempDir(), "tf.json")
	data, err := os.ReadFile(kubeoneOutput)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"kubeone_workers"`),
		[]byte(`"kubeone_static_workers": {"sensitive": false, "type": "object", "value": {"workers": {"private_address": ["192.168.1.21"], "bastion": "198.51.100.7"}}},
  "kubeone_workers"`), 1)
	if err := os.WriteFile(withWorkers, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err = config.LoadTerraform(context.Background(), withWorkers, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubeone.Convert([]byte(head+"cloudProvider: {external: true}\nstaticWorkers: {hosts: [{publicAddress: 203.0.113.9}]}\n"), tf.ForKubeOne())
	if err == nil || !strings.Contains(err.Error(), "staticWorkers.hosts: Forbidden: KubeOne adds the Terraform output's kubeone_static_workers to these hosts") {
		t.Errorf("static workers in both places: %v", err)
	}
}

// TestConvertExternalWithoutTerraform: external alone, without the Terraform output that names
// the cloud, is carried over (not dropped): the manifest says what it said, and loading it
// without the output names the missing cloud.
func TestConvertExternalWithoutTerraform(t *testing.T) {
	res, err := kubeone.Convert([]byte(doc("v1beta3", "cloudProvider: {external: true}\n")), kubeone.Terraform{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cluster.CloudProvider.External || res.Cluster.CloudProvider.OpenStack != nil {
		t.Errorf("cloud %+v, want external carried over and the cloud left to the Terraform output", res.Cluster.CloudProvider)
	}
	manifest, err := res.Manifest("kubeone.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manifest), "# The cloud comes from the Terraform output's cloud_provider") || !strings.Contains(string(manifest), "external: true") {
		t.Errorf("manifest:\n%s", manifest)
	}
}

// TestConvertNamesHelmReleases: every Helm release KubeOne installed is named in its warning, by
// its release name (KubeOne's default: the chart's), with its chart and namespace.
func TestConvertNamesHelmReleases(t *testing.T) {
	res, err := kubeone.Convert([]byte(doc("v1beta3", `helmReleases:
  - {releaseName: ksm, chart: kube-state-metrics, namespace: monitoring, repoURL: https://charts.example.com}
  - {chart: cert-manager, namespace: cert-manager, repoURL: https://charts.example.com}
addons:
  addons:
    - helmRelease: {chart: external-dns, namespace: dns}
`)), kubeone.Terraform{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range res.Warnings {
		all = append(all, w.String())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		"helmReleases[0]: not supported: slipway does not install Helm charts; release ksm (chart kube-state-metrics, namespace monitoring) keeps running",
		"helmReleases[1]: not supported: slipway does not install Helm charts; release cert-manager (namespace cert-manager) keeps running",
		"addons.addons[0].helmRelease: not supported: slipway does not install Helm charts; release external-dns (namespace dns) keeps running",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}
