package v1beta1

// ClusterNetwork configures cluster networking.
type ClusterNetwork struct {
	// PodSubnet is the CIDR pods get addresses from. Default: 10.244.0.0/16.
	PodSubnet string `json:"podSubnet,omitempty"`
	// ServiceSubnet is the CIDR Services get addresses from. Default: 10.96.0.0/12.
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	// ServiceDomainName is the cluster DNS domain. Default: cluster.local.
	ServiceDomainName string `json:"serviceDomainName,omitempty"`
	// NodePortRange is the port range for NodePort Services. Default: 30000-32767.
	NodePortRange string `json:"nodePortRange,omitempty"`
	// CNI is the pod network plugin. Exactly one of flannel, canal, cilium or external.
	// Default: flannel.
	CNI CNI `json:"cni,omitzero"`
	// KubeProxy configures kube-proxy.
	KubeProxy KubeProxy `json:"kubeProxy,omitzero"`
	// UpstreamDNS are DNS servers (IP addresses) that CoreDNS forwards to from hosts whose
	// /etc/resolv.conf names only loopback servers, as inside containers; without them CoreDNS
	// would forward to itself. Hosts with a usable resolver ignore it.
	UpstreamDNS []string `json:"upstreamDNS,omitempty"`
}

// CNI selects the pod network plugin; set exactly one field.
type CNI struct {
	// Flannel: a simple VXLAN overlay. Works everywhere, no network policy.
	Flannel *Flannel `json:"flannel,omitempty"`
	// Canal: flannel for networking plus Calico for network policy.
	Canal *Canal `json:"canal,omitempty"`
	// Cilium: eBPF networking and network policy.
	Cilium *Cilium `json:"cilium,omitempty"`
	// External: you install the CNI yourself (for example as an addon); nodes stay NotReady until
	// you do.
	External *ExternalCNI `json:"external,omitempty"`
}

// Flannel settings.
type Flannel struct {
	// Backend is vxlan or host-gw. Default: vxlan.
	Backend string `json:"backend,omitempty"`
}

// Canal settings.
type Canal struct {
	// MTU of the pod network. Default: 1450 (VXLAN over a 1500-byte network).
	MTU int `json:"mtu,omitempty"`
}

// Cilium settings.
type Cilium struct {
	// KubeProxyReplacement lets Cilium replace kube-proxy.
	KubeProxyReplacement bool `json:"kubeProxyReplacement,omitempty"`
}

// ExternalCNI means the user brings the CNI.
type ExternalCNI struct{}

// KubeProxy settings.
type KubeProxy struct {
	// Mode is iptables or ipvs. Default: iptables.
	Mode string `json:"mode,omitempty"`
	// ConntrackMaxPerCore is the connection-tracking table size per CPU that kube-proxy sets on
	// each host. Default: kube-proxy's own (32768). 0 leaves the host's nf_conntrack_max alone,
	// which hosts that are containers need (the setting is read-only there).
	ConntrackMaxPerCore *int32 `json:"conntrackMaxPerCore,omitempty"`
}
