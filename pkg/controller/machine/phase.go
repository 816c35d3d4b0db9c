package machine

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// Reasons of the Healthy condition.
const (
	reasonInstanceLost  = "InstanceLost"
	reasonJoinTimeout   = "JoinTimeout"
	reasonNodeUnhealthy = "NodeUnhealthy"
	// reasonWaitingForCapacity (Healthy Unknown): the cloud refused the server for quota or
	// capacity; the join timeout starts once it accepts one.
	reasonWaitingForCapacity = "WaitingForCapacity"
	reasonJoining            = "Joining"
)

// reasonInsufficientResources is the reason of the InstanceReady condition, and of the warning
// event, when the cloud refused the server for quota or capacity.
const reasonInsufficientResources = string(v1alpha1.InsufficientResourcesMachineError)

// reasonCapacityFreed is the reason of the event that the cloud accepted a server it had refused.
const reasonCapacityFreed = "CapacityFreed"

// reasonServerFailed is the reason of the event that a Machine's server is in ERROR.
const reasonServerFailed = "ServerFailed"

// setPhase derives status.phase from the conditions, so that the phase can never disagree with
// them: Pending → Provisioning → Provisioned (server runs) → Joining (Node registered) →
// Running (Node Ready), Deleting → Deleted, and Failed.
func setPhase(m *v1alpha1.Machine) {
	c := m.Status.Conditions
	healthy := meta.FindStatusCondition(c, v1alpha1.MachineHealthy)
	switch {
	case machineutil.Deleting(m):
		if m.Status.Phase != v1alpha1.MachinePhaseDeleted {
			m.Status.Phase = v1alpha1.MachinePhaseDeleting
		}
	case m.Status.ErrorReason != nil || (healthy != nil && healthy.Reason == reasonInstanceLost):
		m.Status.Phase = v1alpha1.MachinePhaseFailed
	case conditions.IsTrue(c, v1alpha1.MachineNodeReady):
		m.Status.Phase = v1alpha1.MachinePhaseRunning
	case conditions.IsTrue(c, v1alpha1.MachineNodeJoined):
		m.Status.Phase = v1alpha1.MachinePhaseJoining
	case conditions.IsTrue(c, v1alpha1.MachineInstanceReady):
		m.Status.Phase = v1alpha1.MachinePhaseProvisioned
	case conditions.IsTrue(c, v1alpha1.MachineValidated):
		m.Status.Phase = v1alpha1.MachinePhaseProvisioning
	default:
		m.Status.Phase = v1alpha1.MachinePhasePending
	}
}

// fail records a terminal error; the controller stops working on the Machine until its spec
// changes (which admission forbids, so in practice until it is replaced).
func fail(m *v1alpha1.Machine, reason v1alpha1.MachineStatusError, msg string) {
	m.Status.ErrorReason = &reason
	m.Status.ErrorMessage = &msg
}
