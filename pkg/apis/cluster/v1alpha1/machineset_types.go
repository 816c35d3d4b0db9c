package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineSetDeletePolicy chooses which Machines go first when a MachineSet scales down.
// Machines annotated with DeleteMachineAnnotation, and failed Machines, always go before the
// policy applies.
type MachineSetDeletePolicy string

// Delete policies.
const (
	RandomMachineSetDeletePolicy MachineSetDeletePolicy = "Random"
	OldestMachineSetDeletePolicy MachineSetDeletePolicy = "Oldest"
	NewestMachineSetDeletePolicy MachineSetDeletePolicy = "Newest"
)

// DeleteMachineAnnotation marks a Machine to be removed first on the next scale-down.
const DeleteMachineAnnotation = "cluster.k8s.io/delete-machine"

// MachineSet keeps a number of identical Machines running, as a ReplicaSet does for Pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:resource:shortName=ms
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, legacy API group kept for compatibility with existing manifests"
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSetSpec   `json:"spec,omitempty"`
	Status MachineSetStatus `json:"status,omitempty"`
}

// MachineSetSpec is the desired state of a MachineSet.
type MachineSetSpec struct {
	// Replicas is the number of Machines wanted. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// MinReadySeconds is how long a new Machine's Node must be Ready before it counts as
	// available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// DeletePolicy is Random (the default), Oldest or Newest.
	// +optional
	// +kubebuilder:validation:Enum=Random;Oldest;Newest
	DeletePolicy string `json:"deletePolicy,omitempty"`

	// Selector must match the labels of Template.
	Selector metav1.LabelSelector `json:"selector"`

	// Template is the Machine to create.
	// +optional
	Template MachineTemplateSpec `json:"template,omitempty"`
}

// MachineTemplateSpec describes the Machines that a MachineSet creates.
type MachineTemplateSpec struct {
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec of the Machines.
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
}

// MachineSetStatus is the observed state of a MachineSet.
type MachineSetStatus struct {
	// Replicas is the number of Machines owned by the set, including ones being deleted.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// FullyLabeledReplicas is the number of Machines whose labels match the template's.
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`

	// ReadyReplicas is the number of Machines whose Node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of Machines whose Node has been Ready for at least
	// minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ErrorReason is set when the set hit a terminal problem.
	// +optional
	ErrorReason *MachineStatusError `json:"errorReason,omitempty"`

	// ErrorMessage explains ErrorReason for humans.
	// +optional
	ErrorMessage *string `json:"errorMessage,omitempty"`

	// Conditions of the set, such as a safety freeze.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineSetList is a list of MachineSets.
//
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}
