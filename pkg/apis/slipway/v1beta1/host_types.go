package v1beta1

// Host is one machine that slipway reaches over SSH.
type Host struct {
	// PublicAddress is the address slipway connects to over SSH (directly or through the bastion).
	PublicAddress string `json:"publicAddress"`
	// PrivateAddress is the address other hosts and the cluster use to reach this host. Default:
	// PublicAddress.
	PrivateAddress string `json:"privateAddress,omitempty"`
	// Hostname becomes the Node name. It must be a lowercase DNS-1123 name. Default: the host's
	// own hostname, read over SSH.
	Hostname string `json:"hostname,omitempty"`
	// SSHUsername is the login user. A user other than root needs passwordless sudo.
	// Default: root.
	SSHUsername string `json:"sshUsername,omitempty"`
	// SSHPort of the host's SSH server. Default: 22.
	SSHPort int `json:"sshPort,omitempty"`
	// SSHPrivateKeyFile is a private key (or a key with an OpenSSH certificate next to it as
	// <file>-cert.pub) used to log in. A passphrase is read from SLIPWAY_SSH_PASSPHRASE or asked
	// for on the terminal.
	SSHPrivateKeyFile string `json:"sshPrivateKeyFile,omitempty"`
	// SSHAgentSocket is an ssh-agent socket path, or env:NAME to read the path from an
	// environment variable. Default: env:SSH_AUTH_SOCK.
	SSHAgentSocket string `json:"sshAgentSocket,omitempty"`
	// SSHHostPublicKey pins the host's SSH host key (authorized_keys format, e.g.
	// "ssh-ed25519 AAAA..."). A pinned key wins over known_hosts files. Without one the host must
	// be in ~/.ssh/known_hosts or slipway's per-cluster known_hosts, or apply must be run with
	// --trust-unknown-hosts once.
	SSHHostPublicKey string `json:"sshHostPublicKey,omitempty"`
	// Bastion is a jump host that slipway connects through to reach this host.
	Bastion *Bastion `json:"bastion,omitempty"`
	// Labels are added to this host's Node.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to this host's Node.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Taints are added to this host's Node. Control-plane hosts get the
	// node-role.kubernetes.io/control-plane:NoSchedule taint unless taints are given here; give
	// an empty list ([]) to schedule workloads on control-plane hosts.
	Taints []Taint `json:"taints,omitzero"`
	// Kubelet tunes this host's kubelet.
	Kubelet KubeletConfig `json:"kubelet,omitzero"`
	// IsLeader marks the control-plane host that runs kubeadm init. At most one host may set it.
	// Default: the first control-plane host.
	IsLeader bool `json:"isLeader,omitempty"`
	// UpgradeIndex orders hosts during upgrades: lowest first, ties keep manifest order.
	UpgradeIndex int `json:"upgradeIndex,omitempty"`
}

// Bastion is an SSH jump host.
type Bastion struct {
	// Address of the bastion.
	Address string `json:"address"`
	// Port of the bastion's SSH server. Default: 22.
	Port int `json:"port,omitempty"`
	// User to log in to the bastion as. Default: the host's sshUsername.
	User string `json:"user,omitempty"`
	// PrivateKeyFile for the bastion. Default: the host's sshPrivateKeyFile (and agent).
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	// HostPublicKey pins the bastion's SSH host key (authorized_keys format).
	HostPublicKey string `json:"hostPublicKey,omitempty"`
	// Bastion is a further jump host used to reach this one (a ProxyJump chain, listed from the
	// target outwards).
	Bastion *Bastion `json:"bastion,omitempty"`
}

// Taint is a Kubernetes Node taint.
type Taint struct {
	// Key of the taint: a qualified name such as dedicated or example.com/gpu.
	Key string `json:"key"`
	// Value of the taint; may be empty.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// KubeletConfig tunes a kubelet.
type KubeletConfig struct {
	// SystemReserved reserves resources for system daemons, e.g. {cpu: 100m, memory: 256Mi}.
	SystemReserved map[string]string `json:"systemReserved,omitempty"`
	// KubeReserved reserves resources for Kubernetes daemons, e.g. {cpu: 100m, memory: 256Mi}.
	KubeReserved map[string]string `json:"kubeReserved,omitempty"`
	// EvictionHard sets hard eviction thresholds, e.g. {memory.available: 100Mi}.
	EvictionHard map[string]string `json:"evictionHard,omitempty"`
	// MaxPods is the most pods the node may run. Default: 110.
	MaxPods *int32 `json:"maxPods,omitempty"`
	// AllowCgroupV1 lets the kubelet run on hosts that use cgroup v1, which kubelets refuse from
	// v1.35 on: slipway then sets the kubelet's failCgroupV1: false, has kubeadm's preflight
	// accept the host, and warns on every apply. Without it, apply stops before changing anything
	// when a host runs cgroup v1. cgroup v1 is deprecated upstream and will be removed: move the
	// hosts to cgroup v2 instead where you can. Cluster-wide only (not per host). Default: false.
	AllowCgroupV1 bool `json:"allowCgroupV1,omitempty"`
}
