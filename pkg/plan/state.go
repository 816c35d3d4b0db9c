// Package plan decides what apply must do: from the desired cluster (the manifest) and the
// observed state of every host and of the running cluster, it derives an ordered list of named
// steps, each bound to a host and carrying the reason it is needed. It is a pure function, so
// every decision (install, join, repair, upgrade, nothing) is unit-tested without a host; the
// steps package executes the plan.
package plan

import "time"

// Role of a host in the cluster.
type Role string

// Roles.
const (
	ControlPlane Role = "control-plane"
	Worker       Role = "worker"
)

// HostState is what probing a host over SSH found.
type HostState struct {
	// Name is the host's node name (the manifest hostname or the host's own).
	Name string `json:"name"`
	// Address is the address slipway connects to.
	Address string `json:"address"`
	// Role is the host's role in the manifest.
	Role Role `json:"role"`
	// Leader marks the control-plane host that initialises the cluster.
	Leader bool `json:"leader,omitempty"`

	OS                string `json:"os"`
	Arch              string `json:"arch"`
	ContainerdVersion string `json:"containerdVersion,omitempty"`
	ContainerdActive  bool   `json:"containerdActive,omitempty"`
	KubeletVersion    string `json:"kubeletVersion,omitempty"`
	KubeletActive     bool   `json:"kubeletActive,omitempty"`
	KubeadmVersion    string `json:"kubeadmVersion,omitempty"`
	// Joined means the host has a kubelet.conf: it was initialised or joined.
	Joined bool `json:"joined,omitempty"`
	// AdminConf means the host holds /etc/kubernetes/admin.conf (control planes).
	AdminConf bool `json:"adminConf,omitempty"`
	// EtcdData means /var/lib/etcd holds a member's data.
	EtcdData bool `json:"etcdData,omitempty"`
	// CertExpiry is when the API server certificate expires, if there is one.
	CertExpiry time.Time `json:"certExpiry,omitempty"`
	// SwapActive means swap is on.
	SwapActive bool `json:"swapActive,omitempty"`
	// PrereqHash is the hash of the prerequisites script last run on the host.
	PrereqHash string `json:"prereqHash,omitempty"`
}

// NodeState is a Node as the API server reports it.
type NodeState struct {
	Name           string `json:"name"`
	KubeletVersion string `json:"kubeletVersion"`
	Ready          bool   `json:"ready"`
	ControlPlane   bool   `json:"controlPlane"`
	InternalIP     string `json:"internalIP,omitempty"`
}

// EtcdMember is a member of the cluster's etcd.
type EtcdMember struct {
	ID      uint64 `json:"id"`
	Name    string `json:"name"`
	PeerURL string `json:"peerURL"`
	Healthy bool   `json:"healthy"`
}

// ClusterState is what the running cluster reports. Exists is false before kubeadm init.
type ClusterState struct {
	Exists bool `json:"exists"`
	// Version is the control plane's Kubernetes version (kubeadm-config).
	Version string                `json:"version,omitempty"`
	Nodes   map[string]*NodeState `json:"nodes,omitempty"`
	Etcd    []EtcdMember          `json:"etcd,omitempty"`
	// MachineControllerImage is the deployed machine-controller image, if any.
	MachineControllerImage string `json:"machineControllerImage,omitempty"`
	// CNIReady means the CNI DaemonSet is rolled out.
	CNIReady bool `json:"cniReady,omitempty"`
	// Addons lists what slipway has applied, by name, with the hash of what was applied.
	Addons map[string]string `json:"addons,omitempty"`
}

// Observed is everything probing found.
type Observed struct {
	Hosts   []HostState  `json:"hosts"`
	Cluster ClusterState `json:"cluster"`
}
