// Package cloud defines what the machine-controller needs from an infrastructure provider: create,
// find and delete the one server behind each Machine, and list the servers a cluster owns so that
// orphans can be swept. A provider deletes nothing that the cloud does not show as made by its
// cluster for that Machine, whatever a Machine's annotations or spec claim. Implementations live in sub-packages (openstack) and fakes in cloudtest.
// The controllers depend only on this package, never on a provider's SDK.
package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// InstanceState is a provider-neutral server state.
type InstanceState string

// Instance states.
const (
	// StateCreating: the server exists but is still building.
	StateCreating InstanceState = "Creating"
	// StateRunning: the server is up; its Node may still be joining.
	StateRunning InstanceState = "Running"
	// StateDeleting: deletion has been requested and is in progress.
	StateDeleting InstanceState = "Deleting"
	// StateError: the cloud reports the server as failed; Instance.Fault says why.
	StateError InstanceState = "Error"
	// StateUnknown: any other state the cloud reports.
	StateUnknown InstanceState = "Unknown"
)

// Instance is one server as the provider sees it.
type Instance struct {
	// ID is the cloud's server ID.
	ID string
	// Name is the server name (the Machine name).
	Name string
	// ProviderID is the ID in the form a Node's spec.providerID carries, e.g. openstack:///<id>.
	ProviderID string
	// MachineUID is the UID of the Machine recorded on the server (metadata machine-uid).
	MachineUID string
	// State is the provider-neutral state.
	State InstanceState
	// Fault is the cloud's error message when State is StateError.
	Fault string
	// Addresses are the server's addresses, private ones as InternalIP and floating or public
	// ones as ExternalIP.
	Addresses []corev1.NodeAddress
	// CPUs and MemoryMiB describe the hardware (flavor), when known.
	CPUs      int
	MemoryMiB int
}

// ReferenceLabel must be set to "true" on a Secret or ConfigMap before a Machine's providerSpec
// may reference it (secretKeyRef, configMapKeyRef). References resolve only in the Machine's own
// namespace: the label is how whoever owns the object there lets the controller read it on
// behalf of that namespace's Machines.
const ReferenceLabel = "slipway.dev/machine-controller"

// Variables of the controller's configuration (the credentials Secret that slipway apply writes,
// which the controller reads as its environment) by which an operator widens what Machines may do.
const (
	// EnvAllowMachineCloud set to "true" lets a Machine's providerSpec name its own cloud endpoint,
	// region, project and credentials. Without it they come only from the controller's own
	// configuration, and a providerSpec only says what to create there.
	EnvAllowMachineCloud = "SLIPWAY_ALLOW_MACHINE_CLOUD"
	// EnvAllowHTTP set to "true" accepts plain http:// cloud endpoints, which send credentials
	// and tokens unencrypted; without it only https:// is used.
	EnvAllowHTTP = "SLIPWAY_ALLOW_HTTP"
)

// StateAnnotationSuffix ends the key of every annotation in which a provider records what it
// allocated for a Machine ("<provider>.slipway.dev/state"), and of the one in which the
// controller records the Node it linked ("machine.slipway.dev/state"). Such annotations, like
// spec.providerID, are the controller's: admission refuses them from anyone else, and in
// templates.
const StateAnnotationSuffix = ".slipway.dev/state"

// SpecCheck is a provider's admission check of a Machine's cloudProviderSpec. It runs without the
// cloud and without reading any object, so that admission is fast and fails only for the spec
// itself; namespace is the Machine's. Checks that need the cloud are the controller's.
type SpecCheck func(namespace string, cloudProviderSpec json.RawMessage, path *field.Path) field.ErrorList

// ErrInstanceNotFound is returned by Get when no server belongs to the Machine.
var ErrInstanceNotFound = errors.New("instance not found")

// TerminalError is a failure that retrying cannot fix until the Machine's spec changes, such as
// bad credentials or an unknown flavor. The controller records Reason and Message in the
// Machine's status and stops retrying.
type TerminalError struct {
	Reason  v1alpha1.MachineStatusError
	Message string
}

func (e *TerminalError) Error() string { return fmt.Sprintf("%s: %s", e.Reason, e.Message) }

// Terminal returns a TerminalError with a formatted message.
func Terminal(reason v1alpha1.MachineStatusError, format string, args ...any) error {
	return &TerminalError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// AsTerminal reports whether err is or wraps a TerminalError.
func AsTerminal(err error) (*TerminalError, bool) {
	var t *TerminalError
	ok := errors.As(err, &t)
	return t, ok
}

// CapacityError is a refusal that the cloud lifts by itself once something frees up: a quota
// the project has used up, or no room for the server. It is not terminal: the controller keeps
// the Machine, says why in its InstanceReady condition and an event, and asks again with
// backoff, so that a pool grows back to its size when quota frees.
type CapacityError struct {
	// Message is the cloud's own words, naming the quota (e.g. "Quota exceeded for instances").
	Message string
}

func (e *CapacityError) Error() string {
	return fmt.Sprintf("%s: %s", v1alpha1.InsufficientResourcesMachineError, e.Message)
}

// Capacity returns a CapacityError with a formatted message.
func Capacity(format string, args ...any) error {
	return &CapacityError{Message: fmt.Sprintf(format, args...)}
}

// AsCapacity reports whether err is or wraps a CapacityError.
func AsCapacity(err error) (*CapacityError, bool) {
	var c *CapacityError
	ok := errors.As(err, &c)
	return c, ok
}

// Resources are what one server made from a Machine's spec brings to the cluster: what the
// cluster-autoscaler reads to grow a pool that has no Node to look at (scale from zero).
type Resources struct {
	CPU       int // vCPUs
	MemoryMiB int
	// DiskGiB is the server's root disk, 0 when the cloud does not say.
	DiskGiB int
}

// ResourceReader is a Provider that can say what a server of a Machine's spec brings without
// creating one (for OpenStack, the flavor's vCPUs and RAM and the root disk).
type ResourceReader interface {
	Resources(ctx context.Context, template *v1alpha1.Machine) (Resources, error)
}

// MachineUpdater persists a change to the Machine (annotations or providerStatus) right away,
// so that resources a provider allocated are remembered across controller restarts. mutate is
// applied to the latest version of the Machine, and may be re-applied on conflict.
type MachineUpdater func(ctx context.Context, mutate func(m *v1alpha1.Machine)) error

// Provider manages the servers behind Machines in one cloud. All methods must be safe for
// concurrent use, and every call must be idempotent: the controller calls again after any error,
// restart or timeout.
type Provider interface {
	// Validate checks the Machine's providerSpec: static checks first, then that the referenced
	// cloud objects (flavor, image, network, ...) exist. Results may be cached. It is never called
	// from admission; the controller reports its result as a condition.
	Validate(ctx context.Context, m *v1alpha1.Machine) error

	// Get returns the Machine's server, found by the Machine's UID, or ErrInstanceNotFound.
	Get(ctx context.Context, m *v1alpha1.Machine) (*Instance, error)

	// Create makes sure a server exists for the Machine and returns it. If one already exists for
	// the Machine's UID it is returned unchanged, so a restart never creates a duplicate. Every
	// resource allocated on the way (ports, floating IPs, volumes) is recorded through update
	// before Create returns, so a later Create resumes and a later Delete releases it. A server in
	// StateError is replaced with backoff up to a provider-specific limit, after which Create
	// returns a TerminalError carrying the cloud's fault message.
	Create(ctx context.Context, m *v1alpha1.Machine, update MachineUpdater, userdata string) (*Instance, error)

	// Delete releases the server and everything allocated for it. It returns done=true only when
	// the cloud confirms all of it is gone; "not found" counts as gone.
	Delete(ctx context.Context, m *v1alpha1.Machine, update MachineUpdater) (done bool, err error)

	// List returns every server that this cluster made (by the cluster UID the provider was
	// configured with, never by the cluster's name, which other clusters may share) in the
	// account that the template Machine's providerSpec points at, for the orphan sweep.
	List(ctx context.Context, template *v1alpha1.Machine) ([]Instance, error)
}
