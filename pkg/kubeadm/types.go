package kubeadm

// The subset of kubeadm's v1beta4 API that slipway sets. Field names and JSON tags follow
// kubeadm 1.34 (cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go); fields slipway leaves to
// kubeadm's defaults are not declared at all, so that the rendered files stay short and
// readable.

const (
	kubeadmAPIVersion   = "kubeadm.k8s.io/v1beta4"
	kubeletAPIVersion   = "kubelet.config.k8s.io/v1beta1"
	kubeProxyAPIVersion = "kubeproxy.config.k8s.io/v1alpha1"
)

// typeMeta is omitted when empty so that patches, which are partial documents, carry none.
type typeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

type initConfiguration struct {
	typeMeta         `json:",inline"`
	BootstrapTokens  []bootstrapToken        `json:"bootstrapTokens,omitempty"`
	NodeRegistration nodeRegistrationOptions `json:"nodeRegistration"`
	LocalAPIEndpoint apiEndpoint             `json:"localAPIEndpoint"`
	CertificateKey   string                  `json:"certificateKey,omitempty"`
	Patches          *patches                `json:"patches,omitempty"`
}

type bootstrapToken struct {
	Token       string   `json:"token"`
	Description string   `json:"description,omitempty"`
	TTL         string   `json:"ttl,omitempty"`
	Usages      []string `json:"usages,omitempty"`
	Groups      []string `json:"groups,omitempty"`
}

type nodeRegistrationOptions struct {
	Name      string `json:"name,omitempty"`
	CRISocket string `json:"criSocket,omitempty"`
	// Taints is never omitted: kubeadm reads a missing list as "use the default" and an empty
	// one as "no taints".
	Taints                []taint  `json:"taints"`
	KubeletExtraArgs      []arg    `json:"kubeletExtraArgs,omitempty"`
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
}

type taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type apiEndpoint struct {
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`
	BindPort         int32  `json:"bindPort,omitempty"`
}

type patches struct {
	Directory string `json:"directory,omitempty"`
}

type clusterConfiguration struct {
	typeMeta             `json:",inline"`
	ClusterName          string                `json:"clusterName,omitempty"`
	KubernetesVersion    string                `json:"kubernetesVersion,omitempty"`
	ControlPlaneEndpoint string                `json:"controlPlaneEndpoint,omitempty"`
	ImageRepository      string                `json:"imageRepository,omitempty"`
	Networking           networking            `json:"networking"`
	APIServer            apiServer             `json:"apiServer"`
	ControllerManager    controlPlaneComponent `json:"controllerManager,omitzero"`
	Etcd                 etcd                  `json:"etcd"`
	Proxy                proxy                 `json:"proxy,omitzero"`
}

type networking struct {
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	PodSubnet     string `json:"podSubnet,omitempty"`
	DNSDomain     string `json:"dnsDomain,omitempty"`
}

type controlPlaneComponent struct {
	ExtraArgs []arg `json:"extraArgs,omitempty"`
}

type apiServer struct {
	ExtraArgs    []arg           `json:"extraArgs,omitempty"`
	ExtraVolumes []hostPathMount `json:"extraVolumes,omitempty"`
	CertSANs     []string        `json:"certSANs,omitempty"`
}

type hostPathMount struct {
	Name      string `json:"name"`
	HostPath  string `json:"hostPath"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	PathType  string `json:"pathType,omitempty"`
}

type etcd struct {
	Local *localEtcd `json:"local,omitempty"`
}

type localEtcd struct {
	DataDir string `json:"dataDir"`
}

type proxy struct {
	Disabled bool `json:"disabled,omitempty"`
}

type joinConfiguration struct {
	typeMeta         `json:",inline"`
	NodeRegistration nodeRegistrationOptions `json:"nodeRegistration"`
	Discovery        discovery               `json:"discovery"`
	ControlPlane     *joinControlPlane       `json:"controlPlane,omitempty"`
	Patches          *patches                `json:"patches,omitempty"`
}

type discovery struct {
	BootstrapToken *bootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`
}

type bootstrapTokenDiscovery struct {
	APIServerEndpoint string   `json:"apiServerEndpoint,omitempty"`
	Token             string   `json:"token"`
	CACertHashes      []string `json:"caCertHashes,omitempty"`
}

type joinControlPlane struct {
	LocalAPIEndpoint apiEndpoint `json:"localAPIEndpoint"`
	CertificateKey   string      `json:"certificateKey,omitempty"`
}

type upgradeConfiguration struct {
	typeMeta `json:",inline"`
	Apply    upgradeApply `json:"apply"`
	Node     upgradeNode  `json:"node"`
}

type upgradeApply struct {
	KubernetesVersion     string   `json:"kubernetesVersion,omitempty"`
	CertificateRenewal    *bool    `json:"certificateRenewal,omitempty"`
	EtcdUpgrade           *bool    `json:"etcdUpgrade,omitempty"`
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
	Patches               *patches `json:"patches,omitempty"`
}

type upgradeNode struct {
	CertificateRenewal    *bool    `json:"certificateRenewal,omitempty"`
	EtcdUpgrade           *bool    `json:"etcdUpgrade,omitempty"`
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
	Patches               *patches `json:"patches,omitempty"`
}

// kubeletConfiguration is the subset of kubelet.config.k8s.io/v1beta1 slipway sets
// (k8s.io/kubelet/config/v1beta1).
type kubeletConfiguration struct {
	typeMeta           `json:",inline"`
	CgroupDriver       string            `json:"cgroupDriver,omitempty"`
	ServerTLSBootstrap bool              `json:"serverTLSBootstrap,omitempty"`
	ResolvConf         string            `json:"resolvConf,omitempty"`
	FailCgroupV1       *bool             `json:"failCgroupV1,omitempty"`
	MaxPods            int32             `json:"maxPods,omitempty"`
	SystemReserved     map[string]string `json:"systemReserved,omitempty"`
	KubeReserved       map[string]string `json:"kubeReserved,omitempty"`
	EvictionHard       map[string]string `json:"evictionHard,omitempty"`
}

// kubeProxyConfiguration is the subset of kubeproxy.config.k8s.io/v1alpha1 slipway sets
// (k8s.io/kube-proxy/config/v1alpha1).
type kubeProxyConfiguration struct {
	typeMeta    `json:",inline"`
	Mode        string              `json:"mode"`
	ClusterCIDR string              `json:"clusterCIDR"`
	Conntrack   *kubeProxyConntrack `json:"conntrack,omitempty"`
}

// kubeProxyConntrack sets the connection-tracking table kube-proxy configures on the host.
type kubeProxyConntrack struct {
	MaxPerCore *int32 `json:"maxPerCore"`
}
