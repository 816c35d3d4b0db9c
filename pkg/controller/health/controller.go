package health

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// Options tune the health reconciler.
type Options struct {
	// PollInterval is the controllers' poll interval; a frozen or short-circuited replacement is
	// looked at again after ten of them.
	PollInterval time.Duration
	// MaxUnhealthy caps health-based replacements per MachineDeployment (an absolute number or a
	// percentage of its replicas, rounded up, at least 1). When more Machines are unhealthy than
	// this, none is replaced: that many failures at once point at the cluster or the cloud, and
	// replacing would make it worse (Cluster API's MachineHealthCheck short-circuit).
	MaxUnhealthy intstr.IntOrString
}

// maxUnhealthy returns the replacement cap for a deployment of replicas Machines.
func (o Options) maxUnhealthy(replicas int) (int, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(&o.MaxUnhealthy, replicas, true)
	if err != nil {
		return 0, fmt.Errorf("max-unhealthy %s: %w", o.MaxUnhealthy.String(), err)
	}
	return max(n, 1), nil
}

// Reconciler replaces unhealthy Machines of a MachineSet by deleting them (the set then
// creates replacements), at most maxUnhealthy per MachineDeployment at a time, and not at all
// while the API server or the cloud is unreachable.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	opts     Options
	frozen   func() string // why replacement is frozen, or ""
}

// New returns the health reconciler. frozen says why replacement is frozen now, or "".
func New(c client.Client, recorder record.EventRecorder, opts Options, frozen func() string) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, opts: opts, frozen: frozen}
}

// SetupWithManager adds the reconciler to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("machinehealth").
		For(&v1alpha1.MachineSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.Machine{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
			&v1alpha1.MachineSet{}, handler.OnlyControllerOwner())).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}

// recheck is how soon a frozen or short-circuited replacement is looked at again.
func (r *Reconciler) recheck() time.Duration { return 10 * r.opts.PollInterval }

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ms := &v1alpha1.MachineSet{}
	if err := r.client.Get(ctx, req.NamespacedName, ms); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if machineutil.Deleting(ms) {
		return ctrl.Result{}, nil
	}
	// The cap is per MachineDeployment: count over every set of the deployment.
	sets := []v1alpha1.MachineSet{*ms}
	replicas := int(machineutil.Int32Or(ms.Spec.Replicas, 1))
	var owner client.Object = ms
	if ref := metav1.GetControllerOf(ms); ref != nil && ref.Kind == "MachineDeployment" {
		md := &v1alpha1.MachineDeployment{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: ms.Namespace, Name: ref.Name}, md); err == nil {
			owner = md
			replicas = int(machineutil.Int32Or(md.Spec.Replicas, 1))
			var list v1alpha1.MachineSetList
			if err := r.client.List(ctx, &list, client.InNamespace(ms.Namespace), client.MatchingFields{index.Owner: string(md.UID)}, client.UnsafeDisableDeepCopy); err != nil {
				return ctrl.Result{}, err
			}
			sets = list.Items
		}
	}
	var unhealthy []*v1alpha1.Machine
	inFlight := 0
	for i := range sets {
		var machines v1alpha1.MachineList
		if err := r.client.List(ctx, &machines, client.InNamespace(ms.Namespace), client.MatchingFields{index.Owner: string(sets[i].UID)}, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, err
		}
		for j := range machines.Items {
			m := &machines.Items[j]
			if !needsReplacement(m) {
				continue
			}
			if machineutil.Deleting(m) {
				inFlight++
			} else {
				unhealthy = append(unhealthy, m)
			}
		}
	}
	if len(unhealthy) == 0 {
		return ctrl.Result{}, nil
	}
	if why := r.frozen(); why != "" {
		r.recorder.Eventf(owner, corev1.EventTypeWarning, "ReplacementFrozen", "Not replacing %d unhealthy machines: %s", len(unhealthy), why)
		return ctrl.Result{RequeueAfter: r.recheck()}, nil
	}
	limit, err := r.opts.maxUnhealthy(replicas)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(unhealthy)+inFlight > limit {
		r.recorder.Eventf(owner, corev1.EventTypeWarning, "ReplacementShortCircuited",
			"%d machines unhealthy or being replaced, more than max-unhealthy %d: replacing none", len(unhealthy)+inFlight, limit)
		return ctrl.Result{RequeueAfter: r.recheck()}, nil
	}
	var errs []error
	for _, m := range unhealthy {
		c := conditions.Find(m.Status.Conditions, v1alpha1.MachineHealthy)
		r.recorder.Eventf(m, corev1.EventTypeNormal, "Replacing", "Replacing unhealthy machine: %s", c.Message)
		if err := r.client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting unhealthy machine %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// needsReplacement reports whether the Machine is unhealthy. Terminal errors are not: a
// replacement would fail the same way until the spec changes.
func needsReplacement(m *v1alpha1.Machine) bool {
	c := conditions.Find(m.Status.Conditions, v1alpha1.MachineHealthy)
	return c != nil && c.Status == "False" && m.Status.ErrorReason == nil
}
