package machine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/cloudtrack"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// The machine-controller's RBAC is generated from these markers and the others under
// pkg/controller (make generate-machine-controller); SECURITY.md explains every rule, and a test
// on a real API server fails when the service account can do more than its allow-list.
//
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,verbs=create;delete
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=secrets,resourceNames=machine-controller-node-settings,verbs=get
// +kubebuilder:rbac:groups="",namespace=kube-public,resources=configmaps,resourceNames=cluster-info,verbs=get

// Options tune the Machine reconciler.
type Options struct {
	// Workers is the number of concurrent reconciles.
	Workers int
	// JoinTimeout is how long a Machine may exist without a Node before it is replaced.
	JoinTimeout time.Duration
	// UnhealthyTimeout is how long a Node may stay NotReady before its Machine is replaced.
	UnhealthyTimeout time.Duration
	// DrainTimeout is how long a graceful deletion evicts pods before it gives up and goes on.
	DrainTimeout time.Duration
	// ForcedDeleteTimeout is how long a forced deletion waits for the cloud before it releases
	// the Machine and records the server as a leftover for the orphan sweep.
	ForcedDeleteTimeout time.Duration
	// PollInterval is how often slow cloud operations (a server building or being deleted) and
	// blocked drains are checked again.
	PollInterval time.Duration
	// CapacityRetryMax is the longest wait between two attempts to create a server that the
	// cloud refused for quota or capacity; the wait starts at PollInterval and doubles.
	CapacityRetryMax time.Duration
	// LeftoverNamespace holds the ConfigMap that records servers left behind by forced deletions.
	LeftoverNamespace string
	// Join is where new Machines join as the flags say; a half left empty comes from kubeadm's
	// cluster-info ConfigMap in kube-public.
	Join bootstrap.ClusterInfo
}

// Reconciler turns a Machine into a server and a Node, and releases both on deletion.
type Reconciler struct {
	client   client.Client
	reader   client.Reader // uncached: Secrets and cluster-info are never cached
	kube     kubernetes.Interface
	cloud    *cloudtrack.Provider
	recorder record.EventRecorder
	opts     Options
	joinInfo *joinInfoCache
	// tokens remembers, by Machine UID, the bootstrap token this process made for the Machine
	// (a tokenRef), so that a retried server create reuses it. The Machine's tokenAnnotation
	// records every token Secret made for it, for deleting them after a restart.
	tokens sync.Map
	// settings is the node settings last read (nodeSettings).
	settings settingsMemo
	// confirmed holds, by Machine UID, the cloud's last answer that its server runs.
	confirmed sync.Map
	// refusals counts, by Machine UID, the creates the cloud refused in a row for capacity
	// (an int), for the backoff between them.
	refusals sync.Map
}

// machineScope carries what the steps of one reconcile learn about the Machine.
type machineScope struct {
	orig *v1alpha1.Machine // as read, for the status patch
	m    *v1alpha1.Machine
	inst *cloud.Instance
	// recorded is set when inst was not confirmed by the cloud (which did not answer) but made
	// up from what the Machine records: it may follow the Node already linked, never link one.
	recorded bool
	node     *corev1.Node
	// cloudErr is a cloud failure the steps worked around with recorded data; it is returned
	// after them, so the reconcile is retried with backoff.
	cloudErr error
	// gone is set when the Machine was found deleted mid-reconcile: there is no status to write.
	gone bool
}

// New returns the Machine reconciler. reader must be uncached: Secrets, ConfigMaps and Pods are
// never cached.
func New(c client.Client, reader client.Reader, kube kubernetes.Interface, cloud *cloudtrack.Provider,
	recorder record.EventRecorder, opts Options) *Reconciler {
	return &Reconciler{client: c, reader: reader, kube: kube, cloud: cloud, recorder: recorder, opts: opts,
		joinInfo: &joinInfoCache{reader: reader, static: opts.Join}}
}

// SetupWithManager adds the reconciler to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("machine").
		For(&v1alpha1.Machine{}, builder.WithPredicates(machineutil.NotStatusOnly)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.machinesForNode),
			builder.WithPredicates(nodeChanged)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Workers}).
		Complete(r)
}

// nodeChanged ignores the kubelet's heartbeats, which change nothing a Machine depends on.
var nodeChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
	return nodeReady(o) != nodeReady(n) || o.Spec.ProviderID != n.Spec.ProviderID ||
		o.Spec.Unschedulable != n.Spec.Unschedulable ||
		!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
		!equality.Semantic.DeepEqual(o.Status.Addresses, n.Status.Addresses) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels) || !equality.Semantic.DeepEqual(o.Annotations, n.Annotations)
}}

// machinesForNode maps a Node to the Machines that own it or could match it.
func (r *Reconciler) machinesForNode(ctx context.Context, o client.Object) []reconcile.Request {
	n := o.(*corev1.Node)
	seen := map[client.ObjectKey]bool{}
	var out []reconcile.Request
	add := func(list *v1alpha1.MachineList) {
		for i := range list.Items {
			k := client.ObjectKeyFromObject(&list.Items[i])
			if !seen[k] {
				seen[k] = true
				out = append(out, reconcile.Request{NamespacedName: k})
			}
		}
	}
	if ns, name, ok := splitKey(n.Annotations[v1alpha1.NodeMachineAnnotation]); ok {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
		seen[out[0].NamespacedName] = true
	}
	var list v1alpha1.MachineList
	if n.Spec.ProviderID != "" && r.client.List(ctx, &list, client.MatchingFields{index.ProviderID: n.Spec.ProviderID}) == nil {
		add(&list)
	}
	if r.client.List(ctx, &list, client.MatchingFields{index.NodeName: n.Name}) == nil {
		add(&list)
	}
	for _, a := range n.Status.Addresses {
		if r.client.List(ctx, &list, client.MatchingFields{index.Address: a.Address}) == nil {
			add(&list)
		}
	}
	return out
}

// Reconcile is the skeleton: get, ensure finalizer, deferred status patch, delete or normal path.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	m := &v1alpha1.Machine{}
	if err := r.client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !machineutil.Deleting(m) && !controllerutil.ContainsFinalizer(m, v1alpha1.MachineFinalizer) {
		// The finalizer is persisted before anything exists in the cloud, so that no server can
		// outlive its Machine.
		orig := m.DeepCopy()
		controllerutil.AddFinalizer(m, v1alpha1.MachineFinalizer)
		if err := r.client.Patch(ctx, m, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer to machine %s: %w", req, err)
		}
	}
	s := &machineScope{orig: m.DeepCopy(), m: m}
	defer func() {
		if err := r.patchStatus(ctx, s.orig, s); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()
	if machineutil.Deleting(m) {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

// reconcileNormal runs the steps of a live Machine in order; a step that must wait returns a
// non-zero result and the later steps run on a later reconcile.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	steps := []struct {
		name string
		fn   func(context.Context, *machineScope) (ctrl.Result, error)
	}{
		{"validate", r.reconcileValidation},
		{"instance", r.reconcileInstance},
		{"node", r.reconcileNode},
		{"maintenance", r.reconcileMaintenance},
		{"health", r.reconcileHealth},
	}
	var res ctrl.Result
	for _, st := range steps {
		r2, err := st.fn(ctx, s)
		if err != nil {
			reconcileErrors.WithLabelValues("machine", st.name).Inc()
			return ctrl.Result{}, err
		}
		res = machineutil.Sooner(res, r2)
		if r2.RequeueAfter > 0 && s.stop() {
			break
		}
	}
	if s.cloudErr != nil {
		reconcileErrors.WithLabelValues("machine", "instance").Inc()
		return ctrl.Result{}, s.cloudErr
	}
	return res, nil
}

// stop reports whether the later steps have nothing to work with yet.
func (s *machineScope) stop() bool {
	return s.inst == nil || s.m.Status.ErrorReason != nil || s.gone
}

// patchStatus writes the status if it changed, and records the phase transition.
func (r *Reconciler) patchStatus(ctx context.Context, orig *v1alpha1.Machine, s *machineScope) error {
	m := s.m
	if s.gone {
		return nil
	}
	setPhase(m)
	if orig.Status.Phase != m.Status.Phase {
		// One event per transition, saying what it is about; events cost API requests too.
		r.recorder.Eventf(m, corev1.EventTypeNormal, string(m.Status.Phase), "Machine is %s (was %s)%s",
			m.Status.Phase, machineutil.PhaseOrPending(orig.Status.Phase), phaseDetail(m))
		if m.Status.Phase == v1alpha1.MachinePhaseRunning && orig.Status.Phase != v1alpha1.MachinePhaseRunning &&
			!conditions.IsTrue(orig.Status.Conditions, v1alpha1.MachineNodeJoined) {
			provisioningSeconds.Observe(time.Since(m.CreationTimestamp.Time).Seconds())
		}
	}
	if equality.Semantic.DeepEqual(orig.Status, m.Status) {
		return nil
	}
	m.Status.LastUpdated = machineutil.PtrTo(metav1.Now())
	if err := r.client.Status().Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		if machineutil.Deleting(m) && client.IgnoreNotFound(err) == nil {
			return nil
		}
		return fmt.Errorf("patching status of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

// phaseDetail names the server or Node a phase is about.
func phaseDetail(m *v1alpha1.Machine) string {
	switch {
	case m.Status.Phase == v1alpha1.MachinePhaseProvisioned && m.Spec.ProviderID != nil:
		return ": server " + *m.Spec.ProviderID
	case (m.Status.Phase == v1alpha1.MachinePhaseJoining || m.Status.Phase == v1alpha1.MachinePhaseRunning) && m.Status.NodeRef != nil:
		return ": node " + m.Status.NodeRef.Name
	case m.Status.ErrorMessage != nil:
		return ": " + *m.Status.ErrorMessage
	}
	return ""
}

func splitKey(s string) (ns, name string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], i > 0 && i < len(s)-1
		}
	}
	return "", "", false
}
