package v1alpha1

// Labels, annotations and taints that the machine-controller reads or writes. They are part of
// the API: operators set some of them by hand, and cluster-autoscaler reads NodeMachineAnnotation.
const (
	// MachineTemplateHashLabel is put on a MachineSet, its selector and its Machines. Its value is
	// the hash of the MachineDeployment template the set was made from, so that a template change
	// makes a new set and an unchanged template finds its set again.
	MachineTemplateHashLabel = "machine-template-hash"

	// NodeMachineAnnotation is put on a Node and names its Machine as "<namespace>/<name>", the
	// form cluster-autoscaler's cluster-api provider expects.
	NodeMachineAnnotation = "cluster.k8s.io/machine"

	// AutoscalerMinSizeAnnotation and AutoscalerMaxSizeAnnotation on a MachineDeployment are the
	// bounds within which cluster-autoscaler's cluster-api provider sizes it (through the scale
	// subresource). A pool with them is sized by the autoscaler: slipway's apply leaves its
	// replicas alone once it exists, and admission starts a new one without replicas at the
	// minimum.
	AutoscalerMinSizeAnnotation = "cluster.k8s.io/cluster-api-autoscaler-node-group-min-size"
	AutoscalerMaxSizeAnnotation = "cluster.k8s.io/cluster-api-autoscaler-node-group-max-size"

	// NodeLabelsFromMachineAnnotation, NodeAnnotationsFromMachineAnnotation and
	// NodeTaintsFromMachineAnnotation are put on a Node by the controller. Each lists, comma
	// separated, the labels, annotations or taints ("key:Effect") that the Node carries because its
	// Machine's spec gives them, so that one the Machine no longer gives (its MachineDeployment
	// changed in place) is removed from the Node, and nothing that another writer put there.
	NodeLabelsFromMachineAnnotation      = "machine.slipway.dev/labels-from-machine"
	NodeAnnotationsFromMachineAnnotation = "machine.slipway.dev/annotations-from-machine"
	NodeTaintsFromMachineAnnotation      = "machine.slipway.dev/taints-from-machine"

	// MaintenanceAnnotation set to "true" on a Machine cordons and drains its Node without deleting
	// the Machine. Removing it (or setting anything else) uncordons the Node.
	MaintenanceAnnotation = "cluster.k8s.io/maintenance"

	// RequestDeleteAnnotation set to "true" on a Machine starts an abortable graceful deletion:
	// the Node is cordoned and drained, and only when the drain has finished is the Machine
	// deleted. Removing the annotation before then aborts it and uncordons the Node. A plain
	// DELETE of the Machine cannot be aborted, because Kubernetes cannot undo a deletionTimestamp.
	RequestDeleteAnnotation = "cluster.k8s.io/request-delete"

	// DeletionPolicyAnnotation chooses how a Machine is deleted: "graceful" (the default: cordon
	// and drain first), "unsafe" (no drain) or "forced" (no drain, and the Machine is released even
	// if the cloud cannot delete the server, whose leftover is recorded for the orphan sweep). It
	// may be set on the Machine at any time before or during deletion, or in a template.
	DeletionPolicyAnnotation = "cluster.k8s.io/deletion-policy"

	// SkipEvictionAnnotation on a Node skips eviction when its Machine is deleted; the name is the
	// one existing machine-controller users already put on their Nodes.
	SkipEvictionAnnotation = "kubermatic.io/skip-eviction"

	// NotReadyTaintKey is registered on every new Node by its kubelet (see pkg/bootstrap) with the
	// NoSchedule effect, and removed by the controller once the Node is Ready with a working
	// network, so that no workload lands on a node whose CNI is not up yet.
	NotReadyTaintKey = "cluster.k8s.io/not-ready"

	// ClusterNameTag is the server metadata key (tag) that names the cluster a server belongs to;
	// providers set it, and the orphan sweep lists by it.
	ClusterNameTag = "slipway-cluster"
)

// What Kubermatic's machine-controller leaves on the Machines it made, which slipway's
// controller adopts in its place. Its instance finalizer is MachineFinalizer itself (the same
// name), so deleting an adopted Machine waits for slipway's delete path as it waited for
// Kubermatic's.
const (
	// KubermaticNodeFinalizer is added by Kubermatic's controller together with MachineFinalizer,
	// just before it creates the Machine's server, and stands for deleting the Node. Slipway never
	// adds it: a Machine that carries it may have a server that slipway did not make, which the
	// provider then looks for by the Machine's name and UID. Slipway deletes the Node itself and
	// removes the finalizer with its own.
	KubermaticNodeFinalizer = "machine-node-delete-finalizer"
	// KubermaticFloatingIPFinalizer is Kubermatic's finalizer, and annotation (holding the
	// address's ID), for a floating IP it allocated for the Machine. The provider takes the
	// address over when it adopts the server; the finalizer is removed with MachineFinalizer.
	KubermaticFloatingIPFinalizer = "kubermatic.io/release-openstack-floating-ip"
)

// Autoscaled reports whether the cluster-autoscaler sizes md: it carries either of the
// autoscaler's bounds.
func Autoscaled(md *MachineDeployment) bool {
	_, min := md.Annotations[AutoscalerMinSizeAnnotation]
	_, max := md.Annotations[AutoscalerMaxSizeAnnotation]
	return min || max
}

// ServerMadeElsewhere reports whether another machine-controller (Kubermatic's) may have made
// the Machine's server: it carries KubermaticNodeFinalizer, or it has a Node but no
// spec.providerID (Kubermatic's controller never sets spec.providerID; slipway's sets it before
// it links a Node). A provider then looks for the server by the Machine's name and UID before it
// creates one, so that adopting such a Machine never makes a second server.
func ServerMadeElsewhere(m *Machine) bool {
	if m.Spec.ProviderID != nil {
		return false
	}
	if m.Status.NodeRef != nil {
		return true
	}
	for _, f := range m.Finalizers {
		if f == KubermaticNodeFinalizer {
			return true
		}
	}
	return false
}

// DeletionPolicy values of DeletionPolicyAnnotation.
const (
	DeletionPolicyGraceful = "graceful"
	DeletionPolicyUnsafe   = "unsafe"
	DeletionPolicyForced   = "forced"
)

// Condition types of a Machine. Status.Phase summarises them.
const (
	// MachineValidated is the result of the provider's Validate: False with the cloud's reason
	// when a flavor, image or network does not exist. Admission never calls the cloud.
	MachineValidated = "Validated"
	// MachineInstanceReady is True once the server exists and runs.
	MachineInstanceReady = "InstanceReady"
	// MachineNodeJoined is True once a Node matches the Machine.
	MachineNodeJoined = "NodeJoined"
	// MachineNodeReady mirrors the Node's Ready condition, and is False while the not-ready
	// taint is still on the Node.
	MachineNodeReady = "NodeReady"
	// MachineDrained is True once the Node has been drained (for deletion or maintenance). Its
	// LastTransitionTime to False marks the start of the drain, for the drain timeout.
	MachineDrained = "Drained"
	// MachineHealthy turns False when the Machine should be replaced: its Node did not join in
	// time, stayed NotReady too long, or its server disappeared.
	MachineHealthy = "Healthy"
)

// Condition types of a MachineSet or MachineDeployment set by the safety controller.
const (
	// FrozenCondition is True while a set or deployment is frozen because it has more Machines
	// than replicas+maxSurge+threshold; frozen sets neither create nor delete Machines.
	FrozenCondition = "Frozen"
)
