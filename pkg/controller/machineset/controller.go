package machineset

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/coalesce"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinesets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machinesets/status,verbs=patch
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines,verbs=create

// Options tune the MachineSet reconciler.
type Options struct {
	// Workers is the number of concurrent reconciles.
	Workers int
	// OvershootThreshold is how many Machines a MachineSet may have above its replicas before it
	// is frozen.
	OvershootThreshold int
}

// Reconciler keeps the number of a MachineSet's Machines at its replicas.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	opts     Options
	pending  *expectations
}

// New returns the MachineSet reconciler.
func New(c client.Client, recorder record.EventRecorder, opts Options) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, opts: opts, pending: newExpectations()}
}

// SetupWithManager adds the reconciler to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("machineset").
		For(&v1alpha1.MachineSet{}, builder.WithPredicates(machineutil.NotStatusOnly)).
		Watches(&v1alpha1.Machine{}, seeingCreations(coalesce.Gathered(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(),
			&v1alpha1.MachineSet{}, handler.OnlyControllerOwner()), coalesce.MachineEventDelay), r.pending)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Workers}).
		Complete(r)
}

// setMachines is what one reconcile sees of a set's Machines, after the pending creations and
// deletions that the cache does not show yet are accounted for.
type setMachines struct {
	all      []*v1alpha1.Machine // every owned Machine in the cache, deleting or not
	active   []*v1alpha1.Machine // not being deleted
	creating int                 // created by us, not in the cache yet
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	ms := &v1alpha1.MachineSet{}
	if err := r.client.Get(ctx, req.NamespacedName, ms); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.pending.forget(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if machineutil.Deleting(ms) {
		// Owner references let the garbage collector remove the Machines.
		return ctrl.Result{}, nil
	}
	orig := ms.DeepCopy()
	sm, err := r.machines(ctx, ms)
	if err != nil {
		return ctrl.Result{}, err
	}
	settled := true
	defer func() {
		after, err := r.updateStatus(ctx, orig, ms, sm, settled && retErr == nil)
		retErr = errors.Join(retErr, err)
		res = machineutil.Sooner(res, ctrl.Result{RequeueAfter: after})
	}()
	if r.checkOvershoot(ms, sm) {
		return ctrl.Result{}, nil
	}
	if err := r.syncInPlace(ctx, ms, sm.active); err != nil {
		return ctrl.Result{}, err
	}
	want := int(machineutil.Int32Or(ms.Spec.Replicas, 1))
	have := len(sm.active) + sm.creating
	switch {
	case have < want:
		settled = false
		return ctrl.Result{}, r.createMachines(ctx, ms, want-have)
	case have > want:
		settled = false
		return ctrl.Result{}, r.deleteMachines(ctx, ms, sm, have-want)
	}
	return ctrl.Result{}, nil
}

// machines returns the set's Machines from the cache, corrected by what it created or deleted
// recently and the cache has not caught up with.
func (r *Reconciler) machines(ctx context.Context, ms *v1alpha1.MachineSet) (*setMachines, error) {
	var list v1alpha1.MachineList
	if err := r.client.List(ctx, &list, client.InNamespace(ms.Namespace), client.MatchingFields{index.Owner: string(ms.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing machines of machineset %s/%s: %w", ms.Namespace, ms.Name, err)
	}
	key := client.ObjectKeyFromObject(ms).String()
	names := map[string]*v1alpha1.Machine{}
	for i := range list.Items {
		names[list.Items[i].Name] = &list.Items[i]
	}
	creating, deletingNow := r.pending.observe(key, names)
	sm := &setMachines{creating: creating}
	for i := range list.Items {
		m := &list.Items[i]
		sm.all = append(sm.all, m)
		if !machineutil.Deleting(m) && !deletingNow[m.Name] {
			sm.active = append(sm.active, m)
		}
	}
	return sm, nil
}
