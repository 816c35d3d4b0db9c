package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/leftovers"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
)

// reconcileValidation asks the provider whether the providerSpec points at things that exist.
// The answer is cached per generation in the Validated condition; admission never calls the cloud.
func (r *Reconciler) reconcileValidation(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.m
	if m.Status.ErrorReason != nil {
		return ctrl.Result{}, nil
	}
	if c := conditions.Find(m.Status.Conditions, v1alpha1.MachineValidated); c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == m.Generation {
		return ctrl.Result{}, nil
	}
	if _, err := v1alpha1.DecodeProviderConfig(m.Spec.ProviderSpec); err != nil {
		fail(m, v1alpha1.InvalidConfigurationMachineError, err.Error())
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineValidated, metav1.ConditionFalse, "InvalidProviderSpec", err.Error())
		return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
	}
	if err := r.cloud.Validate(ctx, m); err != nil {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineValidated, metav1.ConditionFalse, "ValidationFailed", err.Error())
		if t, ok := cloud.AsTerminal(err); ok {
			fail(m, t.Reason, t.Message)
			return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
		}
		return ctrl.Result{}, fmt.Errorf("validating machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineValidated, metav1.ConditionTrue, "Valid", "")
	return ctrl.Result{}, nil
}

// hadInstance reports whether a server was ever recorded for the Machine, or a Node linked to
// it (the only trace a server that Kubermatic's controller made leaves on its Machine). Such a
// Machine is never given a second server: if the first disappears the Machine is replaced
// instead.
func hadInstance(m *v1alpha1.Machine) bool {
	return m.Spec.ProviderID != nil || m.Status.NodeRef != nil || nodelink.Of(m) != nil
}

// reconcileInstance finds the Machine's server by UID and creates it when there is none.
func (r *Reconciler) reconcileInstance(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.m
	if m.Status.ErrorReason != nil {
		return ctrl.Result{}, nil
	}
	inst, vouched := r.vouchedFor(ctx, m)
	var err error
	if !vouched {
		inst, err = r.cloud.Get(ctx, m)
		if err == nil && inst.State == cloud.StateRunning {
			r.confirmed.Store(m.UID, confirmation{inst: inst, at: time.Now()})
		} else {
			r.confirmed.Delete(m.UID)
		}
	}
	switch {
	case errors.Is(err, cloud.ErrInstanceNotFound) && hadInstance(m):
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, reasonInstanceLost,
			"the server disappeared from the cloud")
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionFalse, reasonInstanceLost,
			"the server disappeared from the cloud; the Machine will be replaced")
		return ctrl.Result{}, nil
	case errors.Is(err, cloud.ErrInstanceNotFound) || (err == nil && inst.State == cloud.StateError):
		if err == nil && inst.ID != "" {
			// The server itself is seen in ERROR (not the record of one being replaced): say
			// why once per server, as the condition does until the new server runs.
			r.recorder.Eventf(m, corev1.EventTypeWarning, reasonServerFailed, "Server %s is in ERROR (%s); replacing it with a new server", inst.ID, inst.Fault)
		}
		if inst, err = r.create(ctx, m); err != nil {
			if apierrors.IsNotFound(err) {
				if gone, gerr := r.lostDuringCreate(ctx, m); gerr != nil || gone {
					s.gone = gone
					return ctrl.Result{}, gerr
				}
			}
			if c, ok := cloud.AsCapacity(err); ok {
				return r.waitForCapacity(s, c), nil
			}
			if t, ok := cloud.AsTerminal(err); ok {
				fail(m, t.Reason, t.Message)
				conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, string(t.Reason), t.Message)
				return ctrl.Result{}, nil
			}
			conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, "CreateFailed", err.Error())
			return ctrl.Result{}, err
		}
		if v, ok := r.refusals.LoadAndDelete(m.UID); ok {
			r.recorder.Eventf(m, corev1.EventTypeNormal, reasonCapacityFreed, "The cloud accepted server %s after refusing it %d times for quota or capacity", inst.ID, v.(int))
		}
	case err != nil && m.Spec.ProviderID != nil:
		// The cloud does not answer. Carry on with what was recorded about the server, so that
		// the Node is still followed and its health judged; the error is returned at the end.
		s.cloudErr = fmt.Errorf("getting server of machine %s/%s: %w", m.Namespace, m.Name, err)
		s.inst = &cloud.Instance{ProviderID: *m.Spec.ProviderID, Addresses: m.Status.Addresses, State: cloud.StateRunning}
		s.recorded = true
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting server of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	s.inst = inst
	if err := r.recordInstance(ctx, m, inst); err != nil {
		return ctrl.Result{}, err
	}
	if inst.State != cloud.StateRunning {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, "Creating",
			fmt.Sprintf("server %s is %s", inst.ID, inst.State))
		return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionTrue, "Running", "")
	return ctrl.Result{}, nil
}

// instanceVouchTTL is how long the cloud's answer that a server runs stands in for asking again.
const instanceVouchTTL = time.Minute

// confirmation is the cloud's last answer that a Machine's server runs.
type confirmation struct {
	inst *cloud.Instance
	at   time.Time
}

// vouchedFor returns the cloud's last answer about the Machine's server when it need not be
// asked again: the answer said running, is younger than instanceVouchTTL and names the server
// spec.providerID records, and the Machine has no Node yet or its Node is Ready (its kubelet
// reported within the node monitor's grace period). A Machine reconciles on every change of
// its Node and its own metadata, seconds apart on a scale-up of hundreds; asking the cloud each
// time cost about one call per Machine. A server lost behind the controller's back silences its
// kubelet: the Node turns NotReady, which reconciles the Machine and asks the cloud. Before the
// Node exists, a lost server is found when the answer has expired, on the next poll.
func (r *Reconciler) vouchedFor(ctx context.Context, m *v1alpha1.Machine) (*cloud.Instance, bool) {
	v, ok := r.confirmed.Load(m.UID)
	if !ok {
		return nil, false
	}
	c := v.(confirmation)
	if time.Since(c.at) > instanceVouchTTL || m.Spec.ProviderID == nil || *m.Spec.ProviderID != c.inst.ProviderID {
		return nil, false
	}
	if nodelink.Of(m) != nil {
		n, err := r.linkedNode(ctx, m)
		if err != nil || n == nil {
			return nil, false
		}
		if ready := nodeCondition(n, corev1.NodeReady); ready == nil || ready.Status != corev1.ConditionTrue {
			return nil, false
		}
	}
	return c.inst, true
}

// waitForCapacity keeps a Machine whose server the cloud refused for quota or capacity, which
// frees by itself (servers deleted, quota raised): InstanceReady says why in the cloud's words,
// and so does a warning event on the first refusal and whenever those words change; Healthy is
// Unknown, so that neither the join timeout nor the health controller replaces the Machine (a
// new one would be refused the same way); and the create is asked again after a backoff that
// starts at PollInterval and doubles up to CapacityRetryMax. The MachineSet counts the Machine as
// not ready: a rollout waits for it and deletes no old Machine in its place.
func (r *Reconciler) waitForCapacity(s *machineScope, c *cloud.CapacityError) ctrl.Result {
	m := s.m
	n := 1
	if v, ok := r.refusals.Load(m.UID); ok {
		n = v.(int) + 1
	}
	r.refusals.Store(m.UID, n)
	// create set InstanceReady to Creating: what the Machine said before is in s.orig.
	if prev := conditions.Find(s.orig.Status.Conditions, v1alpha1.MachineInstanceReady); prev == nil ||
		prev.Reason != reasonInsufficientResources || prev.Message != c.Message {
		r.recorder.Eventf(m, corev1.EventTypeWarning, reasonInsufficientResources,
			"The cloud refused the server: %s; asking again, at least every %s", c.Message, r.opts.CapacityRetryMax)
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, reasonInsufficientResources, c.Message)
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionUnknown, reasonWaitingForCapacity,
		"the cloud has no quota or capacity for the server yet; the join timeout starts once it accepts one")
	return ctrl.Result{RequeueAfter: capacityBackoff(r.opts.PollInterval, r.opts.CapacityRetryMax, n)}
}

// capacityBackoff is the wait after the nth refusal in a row: base, doubled each time, at most
// limit (and at least base).
func capacityBackoff(base, limit time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return max(min(d, limit), base)
}

// create renders the user-data with a fresh bootstrap token and asks the provider for a server.
func (r *Reconciler) create(ctx context.Context, m *v1alpha1.Machine) (*cloud.Instance, error) {
	userdata, err := r.userdata(ctx, m)
	if err != nil {
		return nil, err
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, "Creating", "creating the server")
	inst, err := r.cloud.Create(ctx, m, r.updater(m), userdata)
	if err != nil {
		return nil, fmt.Errorf("creating server for machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return inst, nil
}

// lostDuringCreate handles a create that failed because a Machine was not found. When the
// Machine itself is gone (its UID no longer under its name), a deletion raced the finalizer: the
// API server checks for finalizers when a delete begins, so a delete that began before the
// finalizer was added removes the Machine without a deletion timestamp, and its delete path
// never runs. What the create had allocated by then is recorded as a leftover, which the orphan
// sweep releases on its next pass, even when this controller is confined to a namespace.
func (r *Reconciler) lostDuringCreate(ctx context.Context, m *v1alpha1.Machine) (bool, error) {
	cur := &v1alpha1.Machine{}
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(m), cur)
	switch {
	case err == nil && cur.UID == m.UID:
		return false, nil // something else was not found; the create error stands
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("checking whether machine %s/%s still exists: %w", m.Namespace, m.Name, err)
	}
	if err := leftovers.Record(ctx, r.client, r.reader, r.opts.LeftoverNamespace, m); err != nil {
		return false, fmt.Errorf("machine %s/%s was deleted while its server was being created: %w", m.Namespace, m.Name, err)
	}
	r.recorder.Eventf(m, corev1.EventTypeWarning, "ServerLeftBehind",
		"The Machine was deleted while its server was being created; recorded the server for the orphan sweep")
	return true, nil
}

// updater is the cloud.MachineUpdater for m: it applies mutate to m and updates it, and on a
// conflict re-reads the latest Machine and tries again. m is the version this reconcile just
// read or patched, so the first try usually succeeds without a read.
func (r *Reconciler) updater(m *v1alpha1.Machine) cloud.MachineUpdater {
	return func(ctx context.Context, mutate func(*v1alpha1.Machine)) error {
		latest := m.DeepCopy()
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mutate(latest)
			err := r.client.Update(ctx, latest)
			if err == nil {
				mutate(m)
				m.ResourceVersion = latest.ResourceVersion
				return nil
			}
			if apierrors.IsConflict(err) {
				latest = &v1alpha1.Machine{}
				if gerr := r.reader.Get(ctx, client.ObjectKeyFromObject(m), latest); gerr != nil {
					return gerr
				}
			}
			return err
		})
	}
}

// providerStatus is what status.providerStatus reports about the server.
type providerStatus struct {
	InstanceID string               `json:"instanceID"`
	State      cloud.InstanceState  `json:"state"`
	Addresses  []corev1.NodeAddress `json:"addresses,omitempty"`
	PrivateIP  string               `json:"privateIP,omitempty"`
	Hardware   *providerHardware    `json:"hardware,omitempty"`
}

type providerHardware struct {
	CPUs      int `json:"cpus"`
	MemoryMiB int `json:"memoryMiB"`
}

// recordInstance stores what the cloud says about the server: spec.providerID when it is new or
// names another server (the provider replaced a failed one under the Machine), and the
// addresses and provider status every time.
func (r *Reconciler) recordInstance(ctx context.Context, m *v1alpha1.Machine, inst *cloud.Instance) error {
	if inst.ProviderID != "" && (m.Spec.ProviderID == nil || *m.Spec.ProviderID != inst.ProviderID) {
		if err := r.recordProviderID(ctx, m, inst.ProviderID); err != nil {
			return err
		}
	}
	ps := providerStatus{InstanceID: inst.ID, State: inst.State, Addresses: inst.Addresses}
	for _, a := range inst.Addresses {
		if a.Type == corev1.NodeInternalIP && ps.PrivateIP == "" {
			ps.PrivateIP = a.Address
		}
	}
	if inst.CPUs > 0 || inst.MemoryMiB > 0 {
		ps.Hardware = &providerHardware{CPUs: inst.CPUs, MemoryMiB: inst.MemoryMiB}
	}
	// Compare decoded values: the API server may re-encode the JSON, and a byte comparison
	// would patch the status on every reconcile.
	var old providerStatus
	if m.Status.ProviderStatus == nil || json.Unmarshal(m.Status.ProviderStatus.Raw, &old) != nil ||
		!equality.Semantic.DeepEqual(old, ps) {
		raw, err := json.Marshal(ps)
		if err != nil {
			return fmt.Errorf("encoding provider status: %w", err)
		}
		m.Status.ProviderStatus = &runtime.RawExtension{Raw: raw}
	}
	m.Status.Addresses = inst.Addresses
	return nil
}
