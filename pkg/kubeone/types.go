package kubeone

// The KubeOneCluster API as this package reads it: the union of the fields of
// kubeone.k8c.io/v1beta2 and v1beta3, written from KubeOne's published API reference. A field
// either version knows decodes; any other field is an error that names it, as in a slipway
// manifest. Settings that slipway does not model are kept as generic trees (map[string]any),
// since they are only named in warnings.

// cluster is a KubeOneCluster.
type cluster struct {
	APIVersion             string           `json:"apiVersion"`
	Kind                   string           `json:"kind"`
	Name                   string           `json:"name"`
	ControlPlane           controlPlane     `json:"controlPlane"`
	APIEndpoint            apiEndpoint      `json:"apiEndpoint"`
	CloudProvider          cloudProvider    `json:"cloudProvider"`
	KubeletConfig          *kubelet         `json:"kubeletConfig,omitempty"`
	Versions               versions         `json:"versions"`
	ContainerRuntime       containerRuntime `json:"containerRuntime"`
	ClusterNetwork         clusterNetwork   `json:"clusterNetwork"`
	Proxy                  proxy            `json:"proxy"`
	StaticWorkers          staticWorkers    `json:"staticWorkers"`
	DynamicWorkers         []DynamicWorker  `json:"dynamicWorkers,omitempty"`
	MachineController      *deploy          `json:"machineController,omitempty"`
	OperatingSystemManager map[string]any   `json:"operatingSystemManager,omitempty"`
	CABundle               string           `json:"caBundle,omitempty"`
	CertificateAuthority   map[string]any   `json:"certificateAuthority,omitempty"`
	Features               features         `json:"features"`
	Addons                 *addons          `json:"addons,omitempty"`
	HelmReleases           []map[string]any `json:"helmReleases,omitempty"`
	SystemPackages         *systemPackages  `json:"systemPackages,omitempty"`
	RegistryConfiguration  *registryConfig  `json:"registryConfiguration,omitempty"`
	AssetConfiguration     map[string]any   `json:"assetConfiguration,omitempty"`
	LoggingConfig          map[string]any   `json:"loggingConfig,omitempty"`
	TLSCipherSuites        map[string]any   `json:"tlsCipherSuites,omitempty"`
	ControlPlaneComponents map[string]any   `json:"controlPlaneComponents,omitempty"`
}

type controlPlane struct {
	Hosts    []host           `json:"hosts"`
	NodeSets []map[string]any `json:"nodeSets,omitempty"`
}

type staticWorkers struct {
	Hosts []host `json:"hosts,omitempty"`
}

// host is a HostConfig.
type host struct {
	PublicAddress         string            `json:"publicAddress"`
	IPv6Addresses         []string          `json:"ipv6Addresses,omitempty"`
	PrivateAddress        string            `json:"privateAddress"`
	SSHPort               int               `json:"sshPort,omitempty"`
	SSHUsername           string            `json:"sshUsername,omitempty"`
	SSHPrivateKeyFile     string            `json:"sshPrivateKeyFile,omitempty"`
	SSHCertFile           string            `json:"sshCertFile,omitempty"`
	SSHHostPublicKey      string            `json:"sshHostPublicKey,omitempty"`
	SSHAgentSocket        string            `json:"sshAgentSocket,omitempty"`
	Bastion               string            `json:"bastion,omitempty"`
	BastionPort           int               `json:"bastionPort,omitempty"`
	BastionUser           string            `json:"bastionUser,omitempty"`
	BastionHostPublicKey  string            `json:"bastionHostPublicKey,omitempty"`
	BastionPrivateKeyFile string            `json:"bastionPrivateKeyFile,omitempty"`
	Hostname              string            `json:"hostname,omitempty"`
	IsLeader              bool              `json:"isLeader,omitempty"`
	Taints                *[]taint          `json:"taints,omitempty"`
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	Kubelet               kubelet           `json:"kubelet"`
	OperatingSystem       string            `json:"operatingSystem,omitempty"`
}

type taint struct {
	Key       string `json:"key"`
	Value     string `json:"value,omitempty"`
	Effect    string `json:"effect"`
	TimeAdded string `json:"timeAdded,omitempty"`
}

// kubelet is a KubeletConfig.
type kubelet struct {
	SystemReserved              map[string]string `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string `json:"evictionHard,omitempty"`
	MaxPods                     *int32            `json:"maxPods,omitempty"`
	PodPidsLimit                *int64            `json:"podPidsLimit,omitempty"`
	ImageGCHighThresholdPercent *int32            `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32            `json:"imageGCLowThresholdPercent,omitempty"`
	ImageMinimumGCAge           string            `json:"imageMinimumGCAge,omitempty"`
	ImageMaximumGCAge           string            `json:"imageMaximumGCAge,omitempty"`
}

type apiEndpoint struct {
	Host             string   `json:"host"`
	Port             int      `json:"port,omitempty"`
	AlternativeNames []string `json:"alternativeNames,omitempty"`
}

type cloudProvider struct {
	External                 bool           `json:"external,omitempty"`
	DisableBundledCSIDrivers bool           `json:"disableBundledCSIDrivers,omitempty"`
	CloudConfig              string         `json:"cloudConfig,omitempty"`
	CSIConfig                string         `json:"csiConfig,omitempty"`
	SecretProviderClassName  string         `json:"secretProviderClassName,omitempty"`
	AWS                      map[string]any `json:"aws,omitempty"`
	Azure                    map[string]any `json:"azure,omitempty"`
	DigitalOcean             map[string]any `json:"digitalocean,omitempty"`
	GCE                      map[string]any `json:"gce,omitempty"`
	Hetzner                  map[string]any `json:"hetzner,omitempty"`
	Kubevirt                 map[string]any `json:"kubevirt,omitempty"`
	Nutanix                  map[string]any `json:"nutanix,omitempty"`
	Openstack                map[string]any `json:"openstack,omitempty"`
	EquinixMetal             map[string]any `json:"equinixmetal,omitempty"`
	VMwareCloudDirector      map[string]any `json:"vmwareCloudDirector,omitempty"`
	Vsphere                  map[string]any `json:"vsphere,omitempty"`
	None                     map[string]any `json:"none,omitempty"`
}

type versions struct {
	Kubernetes string `json:"kubernetes"`
}

type containerRuntime struct {
	Docker     map[string]any `json:"docker,omitempty"`
	Containerd *containerd    `json:"containerd,omitempty"`
}

type containerd struct {
	Registries                         map[string]registry `json:"registries,omitempty"`
	DeviceOwnershipFromSecurityContext *bool               `json:"deviceOwnershipFromSecurityContext,omitempty"`
	SandboxImage                       string              `json:"sandboxImage,omitempty"`
}

type registry struct {
	Mirrors      []string `json:"mirrors,omitempty"`
	OverridePath bool     `json:"overridePath,omitempty"`
	TLSConfig    *struct {
		InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	} `json:"tlsConfig,omitempty"`
	Auth *struct {
		Username      string `json:"username,omitempty"`
		Password      string `json:"password,omitempty"`
		Auth          string `json:"auth,omitempty"`
		IdentityToken string `json:"identityToken,omitempty"`
	} `json:"auth,omitempty"`
}

type clusterNetwork struct {
	PodSubnet            string     `json:"podSubnet,omitempty"`
	PodSubnetIPv6        string     `json:"podSubnetIPv6,omitempty"`
	ServiceSubnet        string     `json:"serviceSubnet,omitempty"`
	ServiceSubnetIPv6    string     `json:"serviceSubnetIPv6,omitempty"`
	ServiceDomainName    string     `json:"serviceDomainName,omitempty"`
	NodePortRange        string     `json:"nodePortRange,omitempty"`
	CNI                  *cni       `json:"cni,omitempty"`
	KubeProxy            *kubeProxy `json:"kubeProxy,omitempty"`
	IPFamily             string     `json:"ipFamily,omitempty"`
	NodeCIDRMaskSizeIPv4 *int       `json:"nodeCIDRMaskSizeIPv4,omitempty"`
	NodeCIDRMaskSizeIPv6 *int       `json:"nodeCIDRMaskSizeIPv6,omitempty"`
	DNSServiceIP         string     `json:"dnsServiceIP,omitempty"`
}

type cni struct {
	Canal *struct {
		MTU int `json:"mtu,omitempty"`
	} `json:"canal,omitempty"`
	Cilium *struct {
		// KubeProxyReplacement is "strict" or "disabled" in early v1beta2, a boolean later.
		KubeProxyReplacement  any  `json:"kubeProxyReplacement,omitempty"`
		EnableHubble          bool `json:"enableHubble,omitempty"`
		EnableL2Announcements bool `json:"enableL2Announcements,omitempty"`
		EnableGatewayAPI      bool `json:"enableGatewayAPI,omitempty"`
	} `json:"cilium,omitempty"`
	WeaveNet *struct {
		Encrypted bool `json:"encrypted,omitempty"`
	} `json:"weaveNet,omitempty"`
	External map[string]any `json:"external,omitempty"`
}

type kubeProxy struct {
	SkipInstallation bool           `json:"skipInstallation,omitempty"`
	IPVS             map[string]any `json:"ipvs,omitempty"`
	IPTables         map[string]any `json:"iptables,omitempty"`
}

type proxy struct {
	HTTP    string `json:"http,omitempty"`
	HTTPS   string `json:"https,omitempty"`
	NoProxy string `json:"noProxy,omitempty"`
}

// DynamicWorker is a KubeOne dynamicWorkers entry, and the shape of a kubeone_workers value.
type DynamicWorker struct {
	Name         string       `json:"name"`
	Replicas     *int32       `json:"replicas"`
	ProviderSpec ProviderSpec `json:"providerSpec"`
}

// ProviderSpec is a KubeOne worker's providerSpec.
type ProviderSpec struct {
	CloudProviderSpec        map[string]any    `json:"cloudProviderSpec"`
	Annotations              map[string]string `json:"annotations,omitempty"`
	MachineAnnotations       map[string]string `json:"machineAnnotations,omitempty"`
	NodeAnnotations          map[string]string `json:"nodeAnnotations,omitempty"`
	MachineObjectAnnotations map[string]string `json:"machineObjectAnnotations,omitempty"`
	Labels                   map[string]string `json:"labels,omitempty"`
	Taints                   []taint           `json:"taints,omitempty"`
	SSHPublicKeys            []string          `json:"sshPublicKeys,omitempty"`
	OperatingSystem          string            `json:"operatingSystem"`
	OperatingSystemSpec      map[string]any    `json:"operatingSystemSpec,omitempty"`
	Network                  map[string]any    `json:"network,omitempty"`
	OverwriteCloudConfig     *string           `json:"overwriteCloudConfig,omitempty"`
}

type deploy struct {
	Deploy bool `json:"deploy,omitempty"`
}

type features struct {
	CoreDNS             map[string]any `json:"coreDNS,omitempty"`
	AlwaysPullImages    map[string]any `json:"alwaysPullImages,omitempty"`
	EventRateLimit      map[string]any `json:"eventRateLimit,omitempty"`
	PodNodeSelector     map[string]any `json:"podNodeSelector,omitempty"`
	PodSecurityPolicy   map[string]any `json:"podSecurityPolicy,omitempty"`
	StaticAuditLog      map[string]any `json:"staticAuditLog,omitempty"`
	DynamicAuditLog     map[string]any `json:"dynamicAuditLog,omitempty"`
	WebhookAuditLog     map[string]any `json:"webhookAuditLog,omitempty"`
	MetricsServer       map[string]any `json:"metricsServer,omitempty"`
	OpenIDConnect       map[string]any `json:"openidConnect,omitempty"`
	EncryptionProviders map[string]any `json:"encryptionProviders,omitempty"`
	NodeLocalDNS        map[string]any `json:"nodeLocalDNS,omitempty"`
}

type addons struct {
	Enable       *bool             `json:"enable,omitempty"`
	Path         string            `json:"path,omitempty"`
	GlobalParams map[string]string `json:"globalParams,omitempty"`
	Addons       []map[string]any  `json:"addons,omitempty"`
}

type systemPackages struct {
	ConfigureRepositories *bool `json:"configureRepositories,omitempty"`
}

type registryConfig struct {
	OverwriteRegistry string `json:"overwriteRegistry,omitempty"`
	InsecureRegistry  bool   `json:"insecureRegistry,omitempty"`
}
