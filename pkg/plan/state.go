// Package plan decides what apply must do: from the desired cluster (what the manifest renders)
// and the observed state of every host and of the running cluster (what the probe saw), Build
// derives an ordered list of named steps, each bound to a host and carrying the reason it is
// needed. Build is a pure function, so every decision (install, join, repair, upgrade, nothing)
// is unit-tested without a host. The package owns the two states' shapes and the step names;
// the probe fills Observed, and the phases package runs the steps.
package plan

import (
	"encoding/json"
	"time"
)

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
	// SnapshotsHash is the hash of the scheduled etcd snapshots' set-up the host last ran
	// (control planes), "" when it has none.
	SnapshotsHash string `json:"snapshotsHash,omitempty"`
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
	// Alarms are the member's active etcd alarms (NOSPACE, CORRUPT).
	Alarms []string `json:"alarms,omitempty"`
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
	// CNIs names, sorted, the CNIs slipway knows (flannel, canal, cilium) whose per-node pods
	// run in the cluster, whoever installed them.
	CNIs []string `json:"cnis,omitempty"`
	// Addons lists what slipway has applied, by name, with the hash of what was applied.
	Addons map[string]string `json:"addons,omitempty"`
	// KubeletServingUnsigned is true when the kubelet-config ConfigMap does not have the kubelets
	// ask the cluster to sign their serving certificates (serverTLSBootstrap), as in a cluster
	// another tool installed: slipway's upgrade turns it on, and the upgraded kubelets' requests
	// then need approval.
	KubeletServingUnsigned bool `json:"kubeletServingUnsigned,omitempty"`
	// PendingCSRs is true when kubelet serving certificate requests of the manifest's hosts
	// await approval.
	PendingCSRs bool `json:"pendingCSRs,omitempty"`
	// MetadataDrift lists, sorted, the manifest's hosts whose Node lacks some of the host's
	// labels, annotations or taints.
	MetadataDrift []string `json:"metadataDrift,omitempty"`
	// MachineDeploymentKubelets maps each MachineDeployment in the workers' namespace to its
	// kubelet version.
	MachineDeploymentKubelets map[string]string `json:"machineDeploymentKubelets,omitempty"`
	// Pools are the MachineDeployments of the workers' namespace, by name.
	Pools map[string]PoolState `json:"pools,omitempty"`
	// UserAddons are the objects that carry the user addon set's label (addons.path), of the
	// kinds recorded as applied and of those the folder renders now.
	UserAddons []AddonObject `json:"userAddons,omitempty"`
	// AddonNamespaced says, by "<group>/<Kind>", whether the API serves a kind of the user addon
	// set as namespaced; a kind it does not serve (yet: its CustomResourceDefinition is in the
	// set) is missing.
	AddonNamespaced map[string]bool `json:"addonNamespaced,omitempty"`
}

// AddonObject names an object of the user addon set: one that addons.path renders, or one the
// cluster holds with the set's label.
type AddonObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Source says where the object comes from: "<file>:<line>" of addons.path for one it
	// renders, the file recorded on the object for one the cluster holds.
	Source string `json:"source,omitempty"`
	// Hash is the hash of the object as rendered, or as recorded on the object when it was
	// applied. It is not shown: the object may be a Secret.
	Hash string `json:"-"`
}

// EncryptionState is what the control planes hold of the encryption of Secrets at rest. It
// names keys and files by name and hash, never a key.
type EncryptionState struct {
	// Files maps each control plane that holds an encryption configuration to its hash.
	Files map[string]string `json:"files,omitempty"`
	// Configured lists the control planes whose kube-apiserver reads the configuration.
	Configured []string `json:"configured,omitempty"`
	// Source is the control plane whose file is the truth: the leader's, else the first
	// control plane with one, in manifest order.
	Source string `json:"source,omitempty"`
	// Holds says, by key names, what the source file holds.
	Holds string `json:"holds,omitempty"`
	// Pending says what the source file still needs to be at rest (a rotation, or the enabling
	// of encryption, under way), "" when nothing.
	Pending string `json:"pending,omitempty"`
}

// Observed is everything probing found.
type Observed struct {
	Hosts      []HostState     `json:"hosts"`
	Cluster    ClusterState    `json:"cluster"`
	Encryption EncryptionState `json:"encryption,omitzero"`
}

// DesiredHost is a host as the manifest wants it.
type DesiredHost struct {
	Name         string
	Address      string
	Role         Role
	Leader       bool
	UpgradeIndex int
	// PrereqHash is the hash of the prerequisites script the host should have run; a host that
	// ran another one (the registries or proxy changed) runs it again.
	PrereqHash string
	// SnapshotsHash is the hash of the scheduled etcd snapshots' set-up the control plane
	// should have, "" for none (a timer that is there is then removed).
	SnapshotsHash string
}

// Desired is the cluster the manifest describes, reduced to what planning compares.
type Desired struct {
	// Version is the Kubernetes version without "v", e.g. 1.36.3.
	Version string
	Hosts   []DesiredHost
	// Addons maps addon names (cni, machine-controller, machine-deployments) to the hash of
	// what slipway would apply now.
	Addons map[string]string
	// CNI names the manifest's CNI when slipway applies it (flannel, canal, cilium); empty
	// for an external one.
	CNI string
	// ImageArchive is the content hash of machineController.imageArchive, empty without one.
	ImageArchive string
	// KubeletUpgrades describes the MachineDeployments whose kubelet version apply raises
	// (--upgrade-machine-deployments), e.g. "pool-a 1.35.4 → 1.36.3".
	KubeletUpgrades []string
	// Pools names the manifest's worker pools (MachineDeployments in the workers' namespace).
	// Apply waits until their Machines are Ready Nodes, unless NoPoolWait (--wait-pools=false).
	Pools      []string
	NoPoolWait bool
	// PoolObjects are the MachineDeployments apply sends for the manifest's pools, by name, as
	// JSON: the plan compares them with the live ones field by field (drift).
	PoolObjects map[string]json.RawMessage
	// Autoscaled are the pools the cluster-autoscaler sizes (autoscaler bounds), with the
	// manifest's replicas: their size at creation, which apply sends only then.
	Autoscaled map[string]int32
	// Encryption is encryption.enabled; RotateEncryptionKey is apply --rotate-encryption-key.
	Encryption          bool
	RotateEncryptionKey bool
	// Restore is apply --restore-from: the cluster is made again from an etcd snapshot, on
	// control planes that are all fresh (see checkRestore).
	Restore bool
	// AddonsPath is true when the manifest sets addons.path, and UserAddons are the objects the
	// folder renders, in the folder's order.
	AddonsPath bool
	UserAddons []AddonObject
}
