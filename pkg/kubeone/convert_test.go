package kubeone_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kubeone"
)

// version is a Kubernetes version inside slipway's window, whatever the window is.
var version = fmt.Sprintf("v1.%d.2", v1beta1.MaxKubernetesMinor)

const hostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILF3yTrKJwQYyxQLYEyaE6HqknU8h45BYunxsmhGnFBQ"

// doc is a KubeOneCluster of the given API version with body as the rest of it. A body without
// controlPlane gets one host.
func doc(apiVersion, body string) string {
	head := fmt.Sprintf("apiVersion: kubeone.k8c.io/%s\nkind: KubeOneCluster\nname: demo\nversions:\n  kubernetes: %s\n", apiVersion, version)
	if !strings.Contains(body, "controlPlane:") {
		head += "controlPlane:\n  hosts:\n    - publicAddress: 203.0.113.5\n      privateAddress: 10.0.0.5\n      sshPrivateKeyFile: KEY\n"
	}
	return head + body
}

// byDefault are the warnings every manifest that leaves features alone gets: KubeOne deploys
// metrics-server and NodeLocal DNSCache unless told not to, slipway neither.
var byDefault = []string{"features.metricsServer", "features.nodeLocalDNS"}

func TestConvert(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		warnings []string // paths, in order
		check    func(t *testing.T, c *v1beta1.Cluster)
		comment  string // in the printed manifest
	}{
		{
			name:  "v1beta2 on OpenStack behind a bastion (testdata)",
			input: strings.ReplaceAll(mustRead(t, "testdata/v1beta2-openstack.yaml"), "VERSION", version),
			warnings: []string{"controlPlane.hosts[2].operatingSystem", "clusterNetwork.cni", "clusterNetwork.cni.canal.mtu", "clusterNetwork.kubeProxy.ipvs.strictARP",
				"cloudProvider.cloudConfig", "cloudProvider.csiConfig", "cloudProvider.disableBundledCSIDrivers",
				"dynamicWorkers[0].providerSpec.annotations[k8c.io/operating-system-profile]", "dynamicWorkers[0].providerSpec.operatingSystemSpec.provisioningUtility",
				"dynamicWorkers[0].providerSpec.cloudProviderSpec.nodeVolumeAttachLimit",
				"helmReleases[0]", "addons.path", "addons.globalParams", "addons.addons[0]", "features.staticAuditLog", "features.openidConnect",
				"features.metricsServer", "features.nodeLocalDNS", "loggingConfig"},
			comment: "KubeOne's default CNI (canal, MTU 1450) written out",
			check: func(t *testing.T, c *v1beta1.Cluster) {
				h := c.ControlPlane.Hosts
				if len(h) != 3 || h[0].PublicAddress != "10.0.0.11" || !h[0].IsLeader || h[0].Bastion.Port != 2222 || *h[0].Kubelet.MaxPods != 120 {
					t.Errorf("host 0: %+v", h[0])
				}
				if h[1].Taints == nil || len(h[1].Taints) != 0 || h[1].Bastion.User != "jump" || h[2].SSHPort != 2200 || h[2].Labels["zone"] != "c" {
					t.Errorf("hosts 1, 2: %+v %+v", h[1], h[2])
				}
				if c.CloudProvider.OpenStack == nil || !c.CloudProvider.External || c.CloudProvider.CloudConfig != "" {
					t.Errorf("cloud %+v (the cloud config, which holds a password, must not be carried over)", c.CloudProvider)
				}
				n := c.ClusterNetwork
				if n.PodSubnet != "10.200.0.0/16" || n.KubeProxy.Mode != "ipvs" || n.CNI.Canal == nil || n.CNI.Canal.MTU != 1450 {
					t.Errorf("network %+v", n)
				}
				r := c.ContainerRuntime.Containerd.Registries["docker.io"]
				if r.Mirrors[0] != "https://mirror.example.com" || !r.TLSConfig.InsecureSkipVerify || r.Auth.Password != "hunter2" {
					t.Errorf("registry %+v", r)
				}
				if c.RegistryConfiguration.OverwriteRegistry != "registry.example.com" || c.Proxy.NoProxy != ".example.com" || !strings.HasSuffix(c.Addons.Path, "addons") {
					t.Errorf("registry %+v proxy %+v addons %+v", c.RegistryConfiguration, c.Proxy, c.Addons)
				}
				w := c.Workers[0]
				if w.Name != "prod-pool1" || *w.Replicas != 3 || w.Autoscaler.Min != 1 || w.Autoscaler.Max != 5 || w.ProviderSpec.Annotations["team"] != "platform" ||
					*w.ProviderSpec.CloudProviderSpec.RootDiskSizeGB != 50 || w.ProviderSpec.Taints[0].Value != "batch" ||
					w.ProviderSpec.CloudProviderSpec.Region != "RegionOne" {
					t.Errorf("pool %+v", w)
				}
			},
		},
		{
			name: "v1beta3 static workers, host keys, kubelet, cilium replacing kube-proxy",
			input: doc("v1beta3", `controlPlane:
  hosts:
    - publicAddress: 203.0.113.5
      privateAddress: 10.0.0.5
      sshPrivateKeyFile: KEY
      sshCertFile: /elsewhere/cert.pub
      sshHostPublicKey: `+b64(hostKey)+`
      bastion: 203.0.113.1
      bastionHostPublicKey: `+b64(hostKey)+`
      bastionPrivateKeyFile: KEY
      ipv6Addresses: ["2001:db8::5"]
      annotations: {owner: ops}
      taints: [{key: dedicated, value: cp, effect: NoSchedule, timeAdded: "2024-01-01T00:00:00Z"}]
staticWorkers:
  hosts:
    - publicAddress: 203.0.113.6
      sshPrivateKeyFile: KEY
      sshHostPublicKey: "`+hostKey+`"
      isLeader: true
      kubelet: {kubeReserved: {cpu: 100m}, evictionHard: {memory.available: 100Mi}}
kubeletConfig:
  maxPods: 200
  podPidsLimit: 4096
  imageGCHighThresholdPercent: 90
cloudProvider: {none: {}}
clusterNetwork:
  cni:
    cilium: {kubeProxyReplacement: true, enableHubble: true}
  kubeProxy: {skipInstallation: true}
  ipFamily: IPv4
  podSubnetIPv6: fd01::/48
  dnsServiceIP: 10.96.0.20
  nodeCIDRMaskSizeIPv4: 25
features:
  metricsServer: {enable: false}
  nodeLocalDNS: {deploy: false}
`),
			warnings: []string{"controlPlane.hosts[0].taints[0].timeAdded", "controlPlane.hosts[0].ipv6Addresses", "controlPlane.hosts[0].sshCertFile",
				"staticWorkers.hosts[0].isLeader", "clusterNetwork.podSubnetIPv6", "clusterNetwork.nodeCIDRMaskSizeIPv4", "clusterNetwork.dnsServiceIP",
				"clusterNetwork.cni.cilium.enableHubble", "kubeletConfig.podPidsLimit", "kubeletConfig.imageGCHighThresholdPercent"},
			check: func(t *testing.T, c *v1beta1.Cluster) {
				h := c.ControlPlane.Hosts[0]
				if h.SSHHostPublicKey != hostKey || h.Bastion.HostPublicKey != hostKey || h.Bastion.PrivateKeyFile == "" || h.Annotations["owner"] != "ops" || h.Taints[0].Value != "cp" {
					t.Errorf("host %+v", h)
				}
				w := c.StaticWorkers.Hosts[0]
				if w.SSHHostPublicKey != hostKey || w.IsLeader || w.Kubelet.KubeReserved["cpu"] != "100m" || w.Kubelet.EvictionHard["memory.available"] != "100Mi" {
					t.Errorf("static worker %+v", w)
				}
				if *c.Kubelet.MaxPods != 200 || c.CloudProvider.None == nil || !c.ClusterNetwork.CNI.Cilium.KubeProxyReplacement {
					t.Errorf("kubelet %+v cloud %+v cni %+v", c.Kubelet, c.CloudProvider, c.ClusterNetwork.CNI)
				}
			},
		},
		{
			name:     "weave net is left running as an external CNI",
			input:    doc("v1beta2", "clusterNetwork:\n  cni:\n    weaveNet: {encrypted: true}\n"),
			warnings: append([]string{"clusterNetwork.cni.weaveNet"}, byDefault...),
			comment:  "KubeOne installed Weave Net",
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.ClusterNetwork.CNI.External == nil || c.ClusterNetwork.CNI.Canal != nil {
					t.Errorf("cni %+v", c.ClusterNetwork.CNI)
				}
			},
		},
		{
			name:     "v1beta2 cilium strict, external CNI-free kube-proxy kept",
			input:    doc("v1beta2", "clusterNetwork:\n  cni:\n    cilium: {kubeProxyReplacement: strict}\n  kubeProxy: {iptables: {}}\n"),
			warnings: byDefault,
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if !c.ClusterNetwork.CNI.Cilium.KubeProxyReplacement || c.ClusterNetwork.KubeProxy.Mode != "iptables" {
					t.Errorf("network %+v", c.ClusterNetwork)
				}
			},
		},
		{
			name:     "external CNI and kube-proxy that slipway installs anyway",
			input:    doc("v1beta3", "clusterNetwork:\n  cni: {external: {}}\n  kubeProxy: {skipInstallation: true, ipvs: {scheduler: lc}}\n"),
			warnings: append([]string{"clusterNetwork.kubeProxy.ipvs.scheduler", "clusterNetwork.kubeProxy.skipInstallation"}, byDefault...),
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.ClusterNetwork.CNI.External == nil || c.ClusterNetwork.KubeProxy.Mode != "ipvs" {
					t.Errorf("network %+v", c.ClusterNetwork)
				}
			},
		},
		{
			name: "runtime, registries and the cloud without a cloud-controller-manager",
			input: doc("v1beta2", `cloudProvider: {none: {}, external: true}
containerRuntime:
  docker: {registryMirrors: [https://mirror.example.com]}
  containerd:
    sandboxImage: registry.example.com/pause:3.10
    deviceOwnershipFromSecurityContext: true
    registries:
      registry.example.com: {overridePath: true, mirrors: [https://m.example.com/v2/x]}
registryConfiguration: {overwriteRegistry: registry.example.com, insecureRegistry: true}
`),
			warnings: append([]string{"clusterNetwork.cni", "cloudProvider.external", "containerRuntime.docker", "containerRuntime.containerd.deviceOwnershipFromSecurityContext",
				"containerRuntime.containerd.sandboxImage", "containerRuntime.containerd.registries[registry.example.com].overridePath"}, byDefault...),
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.CloudProvider.External || !c.RegistryConfiguration.InsecureRegistry || len(c.ContainerRuntime.Containerd.Registries) != 1 {
					t.Errorf("cloud %+v registry %+v runtime %+v", c.CloudProvider, c.RegistryConfiguration, c.ContainerRuntime)
				}
			},
		},
		{
			name: "v1beta3 addons, helm releases and every feature",
			input: doc("v1beta3", `addons:
  path: ./addons
  addons:
    - addon: {name: cluster-autoscaler}
    - helmRelease: {chart: cert-manager, namespace: cert-manager}
features:
  coreDNS: {replicas: 3}
  alwaysPullImages: {enable: true}
  eventRateLimit: {enable: true, config: {configFilePath: erl.yaml}}
  podNodeSelector: {enable: true, config: {configFilePath: pns.yaml}}
  podSecurityPolicy: {enable: true}
  staticAuditLog: {enable: false, config: {policyFilePath: a.yaml}}
  dynamicAuditLog: {enable: true}
  webhookAuditLog: {enable: true, config: {policyFilePath: a.yaml, configFilePath: w.yaml}}
  metricsServer: {enable: true}
  openidConnect: {enable: true, config: {issuerUrl: https://dex.example.com}}
  encryptionProviders: {enable: true}
  nodeLocalDNS: {deploy: false}
`),
			warnings: []string{"clusterNetwork.cni", "addons.path", "addons.addons[0].addon", "addons.addons[1].helmRelease", "features.coreDNS", "features.alwaysPullImages",
				"features.eventRateLimit", "features.podNodeSelector", "features.podSecurityPolicy", "features.dynamicAuditLog", "features.webhookAuditLog",
				"features.openidConnect", "features.encryptionProviders", "features.metricsServer"},
		},
		{
			name:     "addons turned off are left out",
			input:    doc("v1beta2", "addons: {enable: false, path: ./addons}\nfeatures: {metricsServer: {enable: false}, nodeLocalDNS: {deploy: false}}\n"),
			warnings: []string{"clusterNetwork.cni", "addons.enable"},
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.Addons != nil {
					t.Errorf("addons %+v", c.Addons)
				}
			},
		},
		{
			name: "settings slipway does not have",
			input: doc("v1beta3", `caBundle: "-----BEGIN CERTIFICATE-----"
certificateAuthority: {file: ca.pem}
systemPackages: {configureRepositories: false}
assetConfiguration: {kubernetes: {imageRepository: r.example.com}}
loggingConfig: {containerLogMaxFiles: 3}
tlsCipherSuites: {apiServer: [TLS_AES_128_GCM_SHA256]}
controlPlaneComponents: {apiServer: {flags: {v: "4"}}}
operatingSystemManager: {deploy: true}
machineController: {deploy: false}
controlPlane:
  hosts:
    - {publicAddress: 203.0.113.5, sshPrivateKeyFile: KEY}
  nodeSets: [{name: cp, replicas: 3}]
`),
			warnings: append([]string{"controlPlane.nodeSets", "clusterNetwork.cni"}, append(byDefault, "operatingSystemManager", "caBundle", "certificateAuthority",
				"systemPackages.configureRepositories", "assetConfiguration", "loggingConfig", "tlsCipherSuites", "controlPlaneComponents")...),
			check: func(t *testing.T, c *v1beta1.Cluster) {
				if c.MachineController.Deploy == nil || *c.MachineController.Deploy {
					t.Errorf("machineController %+v", c.MachineController)
				}
			},
		},
		{
			name: "worker pool annotations and settings",
			input: doc("v1beta2", `cloudProvider: {openstack: {}, external: true}
clusterNetwork: {cni: {canal: {mtu: 1400}}}
features: {metricsServer: {enable: false}, nodeLocalDNS: {deploy: false}}
dynamicWorkers:
  - name: pool
    replicas: 2
    providerSpec:
      annotations: {example.com/x: "y"}
      machineAnnotations: {old: "1"}
      machineObjectAnnotations: {example.com/m: "z"}
      network: {cidr: 10.0.0.0/24, gateway: 10.0.0.1, dns: {servers: [1.1.1.1]}}
      overwriteCloudConfig: "x"
      operatingSystem: debian
      operatingSystemSpec: {disableAutoUpdate: true, rhelSubscriptionManagerUser: u}
      cloudProviderSpec: {image: debian-12, flavor: m1.small, configDrive: true, serverGroup: sg-1, availabilityZone: nova, username: admin, trustDevicePath: false}
`),
			warnings: []string{"cloudProvider.disableBundledCSIDrivers", "dynamicWorkers[0].providerSpec.annotations[example.com/x]",
				"dynamicWorkers[0].providerSpec.operatingSystemSpec.rhelSubscriptionManagerUser", "dynamicWorkers[0].providerSpec.network",
				"dynamicWorkers[0].providerSpec.overwriteCloudConfig", "dynamicWorkers[0].providerSpec.cloudProviderSpec.trustDevicePath",
				"dynamicWorkers[0].providerSpec.cloudProviderSpec.username"},
			check: func(t *testing.T, c *v1beta1.Cluster) {
				w := c.Workers[0]
				s := w.ProviderSpec.CloudProviderSpec
				if !s.ConfigDrive || s.ServerGroupID != "sg-1" || s.AvailabilityZone != "nova" || !w.ProviderSpec.OperatingSystemSpec.DisableAutoUpdate ||
					w.ProviderSpec.Annotations["old"] != "1" || w.ProviderSpec.MachineObjectAnnotations["example.com/m"] != "z" || c.ClusterNetwork.CNI.Canal.MTU != 1400 {
					t.Errorf("pool %+v", w)
				}
			},
		},
	}
	key := writeKey(t)
	t.Setenv("SSH_AUTH_SOCK", "/nonexistent/agent.sock") // hosts without a key use the agent, as in KubeOne
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := strings.ReplaceAll(tt.input, "KEY", key)
			res, err := kubeone.Convert([]byte(input), kubeone.Terraform{})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, w := range res.Warnings {
				paths = append(paths, w.Path)
				if w.Message == "" {
					t.Errorf("warning %s says nothing", w.Path)
				}
			}
			if !slices.Equal(paths, tt.warnings) {
				t.Errorf("warnings:\n got %q\nwant %q", paths, tt.warnings)
			}
			if tt.check != nil {
				tt.check(t, res.Cluster)
			}
			manifest, err := res.Manifest("kubeone.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if tt.comment != "" && !strings.Contains(string(manifest), "# "+tt.comment) {
				t.Errorf("manifest lacks the comment %q:\n%s", tt.comment, manifest)
			}
			// The printed manifest loads as apply loads it.
			loaded, err := config.Load(context.Background(), config.Options{ManifestPath: "-", Stdin: bytes.NewReader(manifest)})
			if err != nil {
				t.Fatalf("the converted manifest does not load: %v\n%s", err, manifest)
			}
			if tt.check != nil {
				tt.check(t, loaded.Cluster)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	below := fmt.Sprintf("v1.%d.0", v1beta1.MinKubernetesMinor-1)
	tests := []struct{ name, input, want string }{
		{"not YAML", "apiVersion: [", "parsing YAML"},
		{"a list", "- a\n- b\n", "line 1: a KubeOneCluster manifest must be a YAML mapping"},
		{"a duplicate key", doc("v1beta2", "name: again\n"), "name"},
		{"a slipway manifest", "apiVersion: slipway.dev/v1beta1\nkind: Cluster\n", `kind: Unsupported value: "Cluster"`},
		{"an older KubeOne API", "apiVersion: kubeone.k8c.io/v1beta1\nkind: KubeOneCluster\n", `apiVersion: Unsupported value: "kubeone.k8c.io/v1beta1"`},
		{"an unknown field", doc("v1beta2", "clusterNetwork:\n  cni:\n    flannel: {}\n"), "clusterNetwork.cni.flannel"},
		{"a field of the wrong type", doc("v1beta3", "apiEndpoint: {port: many}\n"), "apiEndpoint.port"},
		{"another cloud", doc("v1beta2", "cloudProvider: {aws: {}}\n"), `cloudProvider.aws: Unsupported value`},
		{"a version below the window", strings.Replace(doc("v1beta2", ""), version, below, 1),
			`versions.kubernetes: Invalid value: "` + below + `"`},
		{"the window is named", strings.Replace(doc("v1beta2", ""), version, below, 1), v1beta1.SupportedVersionsText},
		{"dual stack", doc("v1beta3", "clusterNetwork: {ipFamily: IPv4+IPv6}\n"), `clusterNetwork.ipFamily: Unsupported value: "IPv4+IPv6"`},
		{"a host key that is none", doc("v1beta3", "staticWorkers: {hosts: [{publicAddress: 10.0.0.9, sshHostPublicKey: bm9wZQ==}]}\n"), "staticWorkers.hosts[0].sshHostPublicKey"},
		{"a worker OS slipway cannot boot", doc("v1beta2", "dynamicWorkers: [{name: p, replicas: 1, providerSpec: {operatingSystem: centos, cloudProviderSpec: {}}}]\n"),
			`dynamicWorkers[0].providerSpec.operatingSystem: Unsupported value: "centos"`},
		{"a worker OS whose boot slipway does not render", doc("v1beta2", "dynamicWorkers: [{name: p, replicas: 1, providerSpec: {operatingSystem: flatcar, cloudProviderSpec: {}}}]\n"),
			`dynamicWorkers[0].providerSpec.operatingSystem: Unsupported value: "flatcar": supported values: "ubuntu", "debian"`},
		{"half the autoscaler bounds", doc("v1beta2", "dynamicWorkers: [{name: p, replicas: 1, providerSpec: {operatingSystem: ubuntu, annotations: {cluster.k8s.io/cluster-api-autoscaler-node-group-min-size: '1'}, cloudProviderSpec: {}}}]\n"),
			"dynamicWorkers[0].providerSpec.annotations: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kubeone.Convert([]byte(tt.input), kubeone.Terraform{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			// Each sentence is said once: the window is named once, not by the version's error
			// and again by the advice after it.
			if n := strings.Count(err.Error(), v1beta1.SupportedVersionsText); n > 1 {
				t.Errorf("the error names the window %d times: %v", n, err)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeKey writes a private key file for the hosts to name (validation wants SSH
// authentication; the key is never used to connect).
func writeKey(t *testing.T) string {
	t.Helper()
	f := t.TempDir() + "/id"
	if err := os.WriteFile(f, []byte("not used\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
