package machinedeployment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/coalesce"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinedeployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinedeployments/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinedeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinesets,verbs=create;delete
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinesets/finalizers,verbs=update

// Options tune the MachineDeployment reconciler.
type Options struct {
	// Workers is the number of concurrent reconciles.
	Workers int
	// Resources, when the cloud can say what a server of a template brings, fills in the
	// cluster-autoscaler's capacity annotations of the MachineDeployments it sizes.
	Resources cloud.ResourceReader
}

// Reconciler rolls MachineSets over when the template changes, as the Deployment controller
// does for ReplicaSets.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	opts     Options

	// written remembers the generation of every set this controller last wrote, so that it
	// never plans on a cached set older than its own last write.
	written sync.Map // types.UID → int64
}

// New returns the MachineDeployment reconciler.
func New(c client.Client, recorder record.EventRecorder, opts Options) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, opts: opts}
}

// SetupWithManager adds the reconciler to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("machinedeployment").
		For(&v1alpha1.MachineDeployment{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&v1alpha1.MachineSet{}, coalesce.Gathered(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
			&v1alpha1.MachineDeployment{}, handler.OnlyControllerOwner()), coalesce.MachineEventDelay)).
		Watches(&v1alpha1.Machine{}, coalesce.Gathered(handler.EnqueueRequestsFromMapFunc(r.deploymentForMachine), coalesce.MachineEventDelay)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Workers}).
		Complete(r)
}

// deploymentForMachine maps a Machine to the deployment that owns its set.
func (r *Reconciler) deploymentForMachine(ctx context.Context, o client.Object) []reconcile.Request {
	ref := metavOwner(o, "MachineSet")
	if ref == "" {
		return nil
	}
	ms := &v1alpha1.MachineSet{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: ref}, ms); err != nil {
		return nil
	}
	if md := metavOwner(ms, "MachineDeployment"); md != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: md}}}
	}
	return nil
}

// deploymentParams are the deployment's settings with defaults applied.
type deploymentParams struct {
	replicas, maxSurge, maxUnavailable int32
	minReady                           time.Duration
	historyLimit                       int
	deadline                           time.Duration
}

func params(md *v1alpha1.MachineDeployment) (deploymentParams, error) {
	p := deploymentParams{
		replicas:     machineutil.Int32Or(md.Spec.Replicas, 1),
		minReady:     time.Duration(machineutil.Int32Or(md.Spec.MinReadySeconds, 0)) * time.Second,
		historyLimit: int(machineutil.Int32Or(md.Spec.RevisionHistoryLimit, 1)),
		deadline:     time.Duration(machineutil.Int32Or(md.Spec.ProgressDeadlineSeconds, 600)) * time.Second,
	}
	surge, unavail := intstr.FromInt32(1), intstr.FromInt32(0)
	if s := md.Spec.Strategy; s != nil && s.RollingUpdate != nil {
		if s.RollingUpdate.MaxSurge != nil {
			surge = *s.RollingUpdate.MaxSurge
		}
		if s.RollingUpdate.MaxUnavailable != nil {
			unavail = *s.RollingUpdate.MaxUnavailable
		}
	}
	var err error
	p.maxSurge, p.maxUnavailable, err = ResolveSurgeUnavailable(surge, unavail, p.replicas)
	return p, err
}

// ResolveSurgeUnavailable turns maxSurge and maxUnavailable into numbers of Machines the way
// Deployments do: percentages of replicas, surge rounded up and unavailable rounded down; if
// both come out 0, unavailable becomes 1 so that a rollout can move. Both given as 0 is invalid.
func ResolveSurgeUnavailable(surge, unavail intstr.IntOrString, replicas int32) (int32, int32, error) {
	s, err := intstr.GetScaledValueFromIntOrPercent(&surge, int(replicas), true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(&unavail, int(replicas), false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if s < 0 || u < 0 {
		return 0, 0, fmt.Errorf("maxSurge and maxUnavailable must not be negative")
	}
	if surge.String() == "0" && unavail.String() == "0" || surge.String() == "0%" && unavail.String() == "0%" {
		return 0, 0, fmt.Errorf("maxSurge and maxUnavailable cannot both be 0")
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	md := &v1alpha1.MachineDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, md); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if machineutil.Deleting(md) {
		return ctrl.Result{}, nil // owner references let the garbage collector remove the sets
	}
	r.syncCapacity(ctx, md)
	p, err := params(md)
	if err != nil {
		r.recorder.Eventf(md, "Warning", "InvalidStrategy", "%v", err)
		return ctrl.Result{}, nil // admission rejects this; nothing to do until the spec changes
	}
	sets, recheck, err := r.sets(ctx, md, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !r.caughtUp(sets) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	orig := md.DeepCopy()
	hash := templateHash(&md.Spec.Template)
	plan := &rollout{replicas: p.replicas, maxSurge: p.maxSurge, maxUnavailable: p.maxUnavailable, recheck: recheck}
	current := currentSet(sets, &md.Spec.Template, hash)
	for _, s := range sets {
		if s == current {
			plan.newSet = s
		} else {
			plan.oldSets = append(plan.oldSets, s)
		}
	}
	defer func() {
		after, err := r.updateStatus(ctx, orig, md, p, plan)
		retErr = errors.Join(retErr, err)
		res = machineutil.Sooner(res, ctrl.Result{RequeueAfter: after})
	}()
	if frozenSet(sets) != nil {
		return ctrl.Result{}, nil
	}
	switch {
	case plan.scaling():
		plan.scale()
	case md.Spec.Paused:
	case plan.newSet == nil:
		return ctrl.Result{}, r.createNewSet(ctx, md, p, plan, hash)
	default:
		plan.scaleNew()
		if plan.newSet.spec == plan.newSet.origSpec {
			plan.scaleDownOld()
		}
	}
	if err := r.applySpecs(ctx, md, p, plan); err != nil {
		return ctrl.Result{}, err
	}
	if plan.complete() {
		return ctrl.Result{}, r.cleanupHistory(ctx, md, p, plan)
	}
	return ctrl.Result{}, nil
}

// caughtUp reports whether the cache shows every set at least as new as this controller's last
// write to it.
func (r *Reconciler) caughtUp(sets []*setState) bool {
	for _, s := range sets {
		if g, ok := r.written.Load(s.ms.UID); ok && s.ms.Generation < g.(int64) {
			return false
		}
	}
	return true
}

func (r *Reconciler) wrote(ms *v1alpha1.MachineSet) {
	r.written.Store(ms.UID, ms.Generation)
}

// sets returns the deployment's MachineSets with their Machine counts, oldest revision first.
func (r *Reconciler) sets(ctx context.Context, md *v1alpha1.MachineDeployment, p deploymentParams) ([]*setState, time.Duration, error) {
	var list v1alpha1.MachineSetList
	if err := r.client.List(ctx, &list, client.InNamespace(md.Namespace), client.MatchingFields{index.Owner: string(md.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, 0, fmt.Errorf("listing machinesets of machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	now := time.Now()
	var recheck time.Duration
	out := make([]*setState, 0, len(list.Items))
	for i := range list.Items {
		ms := &list.Items[i]
		if machineutil.Deleting(ms) {
			continue
		}
		var machines v1alpha1.MachineList
		if err := r.client.List(ctx, &machines, client.InNamespace(md.Namespace), client.MatchingFields{index.Owner: string(ms.UID)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, 0, fmt.Errorf("listing machines of machineset %s/%s: %w", ms.Namespace, ms.Name, err)
		}
		rev, _ := strconv.ParseInt(ms.Annotations[v1alpha1.RevisionAnnotation], 10, 64)
		s := &setState{ms: ms, revision: rev, spec: machineutil.Int32Or(ms.Spec.Replicas, 1), count: int32(len(machines.Items))}
		s.origSpec = s.spec
		for j := range machines.Items {
			if machineutil.Ready(&machines.Items[j]) {
				s.ready++
			}
			ok, left := machineutil.Available(&machines.Items[j], p.minReady, now)
			if ok {
				s.available++
			} else if left > 0 && (recheck == 0 || left < recheck) {
				recheck = left
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].revision < out[j].revision })
	return out, recheck, nil
}

func metavOwner(o client.Object, kind string) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == kind {
			return ref.Name
		}
	}
	return ""
}

func frozenSet(sets []*setState) *setState {
	for _, s := range sets {
		if conditions.IsTrue(s.ms.Status.Conditions, v1alpha1.FrozenCondition) {
			return s
		}
	}
	return nil
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func atoi(s string) (int32, bool) {
	n, err := strconv.Atoi(s)
	return int32(n), err == nil
}
