package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineDeploymentStrategyType is how a MachineDeployment replaces old Machines.
type MachineDeploymentStrategyType string

// RollingUpdateMachineDeploymentStrategyType replaces Machines gradually, within maxSurge and
// maxUnavailable. It is the only strategy.
const RollingUpdateMachineDeploymentStrategyType MachineDeploymentStrategyType = "RollingUpdate"

// Annotations that a MachineDeployment puts on its MachineSets.
const (
	// RevisionAnnotation is the rollout revision of a MachineSet.
	RevisionAnnotation = "machinedeployment.clusters.k8s.io/revision"
	// DesiredReplicasAnnotation is the deployment's replicas when the set was last scaled.
	DesiredReplicasAnnotation = "machinedeployment.clusters.k8s.io/desired-replicas"
	// MaxReplicasAnnotation is replicas+maxSurge when the set was last scaled.
	MaxReplicasAnnotation = "machinedeployment.clusters.k8s.io/max-replicas"
)

// MachineDeployment manages MachineSets and rolls Machines over when the template changes, as a
// Deployment does for Pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:resource:shortName=md
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, legacy API group kept for compatibility with existing manifests"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updatedReplicas`
// +kubebuilder:printcolumn:name="Provider",type=string,JSONPath=`.spec.template.spec.providerSpec.value.cloudProvider`
// +kubebuilder:printcolumn:name="OS",type=string,JSONPath=`.spec.template.spec.providerSpec.value.operatingSystem`
// +kubebuilder:printcolumn:name="Kubelet",type=string,JSONPath=`.spec.template.spec.versions.kubelet`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineDeploymentSpec   `json:"spec,omitempty"`
	Status MachineDeploymentStatus `json:"status,omitempty"`
}

// MachineDeploymentSpec is the desired state of a MachineDeployment.
type MachineDeploymentSpec struct {
	// Replicas is the number of Machines wanted. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector must match the labels of Template.
	Selector metav1.LabelSelector `json:"selector"`

	// Template is the Machine to create.
	Template MachineTemplateSpec `json:"template"`

	// Strategy says how old Machines are replaced by new ones.
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`

	// MinReadySeconds is how long a new Machine's Node must be Ready before it counts as
	// available. Defaults to 0.
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// RevisionHistoryLimit is how many old, scaled-down MachineSets to keep. Defaults to 1.
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Paused stops rollouts; scaling still happens.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// ProgressDeadlineSeconds is how long a rollout may go without progress before the
	// Progressing condition turns False with reason ProgressDeadlineExceeded. Defaults to 600.
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// MachineDeploymentStrategy says how Machines are replaced.
type MachineDeploymentStrategy struct {
	// Type is RollingUpdate, the only strategy.
	// +optional
	// +kubebuilder:validation:Enum=RollingUpdate
	Type MachineDeploymentStrategyType `json:"type,omitempty"`

	// RollingUpdate bounds the rollout.
	// +optional
	RollingUpdate *MachineRollingUpdateDeployment `json:"rollingUpdate,omitempty"`
}

// MachineRollingUpdateDeployment bounds a rolling update. Percentages are of spec.replicas;
// maxSurge rounds up and maxUnavailable rounds down, as for Deployments. They cannot both be 0.
type MachineRollingUpdateDeployment struct {
	// MaxUnavailable is how many Machines may be unavailable during the update. Defaults to 0.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many Machines may exist above replicas during the update. Defaults to 1.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// Condition types of a MachineDeployment.
const (
	MachineDeploymentAvailable   = "Available"
	MachineDeploymentProgressing = "Progressing"
)

// MachineDeploymentStatus is the observed state of a MachineDeployment.
type MachineDeploymentStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of Machines owned by the deployment's sets.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// UpdatedReplicas is the number of Machines built from the current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`

	// ReadyReplicas is the number of Machines whose Node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of Machines available for at least minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// UnavailableReplicas is the number of wanted Machines that are not available yet.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`

	// LastProgressTime is when the rollout last made progress (a set scaled, or a Machine became
	// updated or available). The Progressing condition turns False with reason
	// ProgressDeadlineExceeded when progressDeadlineSeconds pass after it without progress.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty"`
	// Conditions are Available and Progressing, plus any safety freeze.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineDeploymentList is a list of MachineDeployments.
//
// +kubebuilder:object:root=true
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}
