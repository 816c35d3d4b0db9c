package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MachineFinalizer is set on every Machine before its server is created, so that the server,
// its ports, floating IPs and volumes are always released before the object disappears.
const MachineFinalizer = "machine-delete-finalizer"

// Machine is one worker machine: a cloud server that boots, joins the cluster as a Node and is
// drained and released when the Machine is deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ma
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, legacy API group kept for compatibility with existing manifests"
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.providerSpec.value.cloudProvider`
// +kubebuilder:printcolumn:name="OS",type=string,JSONPath=`.spec.providerSpec.value.operatingSystem`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeRef.name`
// +kubebuilder:printcolumn:name="Kubelet",type=string,JSONPath=`.spec.versions.kubelet`
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.status.addresses[0].address`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="ProviderID",type=string,JSONPath=`.spec.providerID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSpec   `json:"spec,omitempty"`
	Status MachineStatus `json:"status,omitempty"`
}

// MachineSpec is the desired state of a Machine.
type MachineSpec struct {
	// ObjectMeta holds the labels and annotations that are copied to the Node once it joins.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Taints are added to the Node once it joins.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ProviderSpec describes the server to create: cloud provider, its settings and the
	// operating system.
	ProviderSpec ProviderSpec `json:"providerSpec"`

	// Versions of the Kubernetes components to install on the machine.
	// +optional
	Versions MachineVersionInfo `json:"versions,omitempty"`

	// ProviderID is the cloud's identifier of the server, in the form the Node carries in
	// spec.providerID (for example openstack:///<server-uuid>). It is set by the controller.
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
}

// ProviderSpec carries provider-specific configuration as opaque JSON.
type ProviderSpec struct {
	// Value is the provider configuration: cloudProvider, cloudProviderSpec, operatingSystem,
	// operatingSystemSpec and sshPublicKeys.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Value *runtime.RawExtension `json:"value,omitempty"`
}

// MachineVersionInfo names the versions of the components installed on a machine.
type MachineVersionInfo struct {
	// Kubelet is the semantic version of the kubelet, with or without a leading "v".
	// +optional
	Kubelet string `json:"kubelet,omitempty"`
}

// MachineStatusError is a machine-readable reason why a Machine failed.
type MachineStatusError string

// Reasons a Machine can fail with. They are terminal: the controller stops retrying until the
// spec changes.
const (
	InvalidConfigurationMachineError  MachineStatusError = "InvalidConfiguration"
	UnsupportedChangeMachineError     MachineStatusError = "UnsupportedChange"
	InsufficientResourcesMachineError MachineStatusError = "InsufficientResources"
	CreateMachineError                MachineStatusError = "CreateError"
	UpdateMachineError                MachineStatusError = "UpdateError"
	DeleteMachineError                MachineStatusError = "DeleteError"
	JoinTimeoutMachineError           MachineStatusError = "JoinTimeout"
)

// MachinePhase is the coarse lifecycle position of a Machine.
type MachinePhase string

// Machine phases, in lifecycle order.
const (
	MachinePhasePending      MachinePhase = "Pending"
	MachinePhaseProvisioning MachinePhase = "Provisioning"
	MachinePhaseProvisioned  MachinePhase = "Provisioned"
	MachinePhaseJoining      MachinePhase = "Joining"
	MachinePhaseRunning      MachinePhase = "Running"
	MachinePhaseDeleting     MachinePhase = "Deleting"
	MachinePhaseDeleted      MachinePhase = "Deleted"
	MachinePhaseFailed       MachinePhase = "Failed"
)

// MachineStatus is the observed state of a Machine.
type MachineStatus struct {
	// NodeRef points to the Node that this Machine became.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`

	// LastUpdated is when the controller last changed this status.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Versions are the versions observed on the Node.
	// +optional
	Versions *MachineVersionInfo `json:"versions,omitempty"`

	// ErrorReason is set when the Machine hit a terminal problem.
	// +optional
	ErrorReason *MachineStatusError `json:"errorReason,omitempty"`

	// ErrorMessage explains ErrorReason for humans.
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// ProviderStatus is provider-specific state: instance ID and state, addresses and hardware.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ProviderStatus *runtime.RawExtension `json:"providerStatus,omitempty"`

	// Addresses of the server, as the cloud reports them.
	// +optional
	Addresses []corev1.NodeAddress `json:"addresses,omitempty"`

	// Phase is the lifecycle phase: Pending, Provisioning, Provisioned, Joining, Running,
	// Deleting, Deleted or Failed.
	// +optional
	Phase MachinePhase `json:"phase,omitempty"`

	// Conditions are the detailed observations behind Phase.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineList is a list of Machines.
//
// +kubebuilder:object:root=true
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}
