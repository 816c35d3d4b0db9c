package machineset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// slowStartInitial is the first batch of a scale-up. Batches double while they succeed, so a
// broken template fails one create, not hundreds (as the ReplicaSet controller does).
const slowStartInitial = 1

// deleteParallelism bounds the concurrent DELETE requests of one scale-down. Deletion is cheap
// for the API server (the Machine controller does the slow part), so no slow start is needed.
const deleteParallelism = 16

// createMachines creates n Machines from the template, in doubling batches.
func (r *Reconciler) createMachines(ctx context.Context, ms *v1alpha1.MachineSet, n int) error {
	key := client.ObjectKeyFromObject(ms).String()
	for batch := slowStartInitial; n > 0; batch *= 2 {
		size := min(batch, n)
		errs := make([]error, size)
		var wg sync.WaitGroup
		for i := range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := newMachine(ms)
				if err := r.client.Create(ctx, m); err != nil {
					errs[i] = fmt.Errorf("creating machine for machineset %s: %w", key, err)
					return
				}
				r.pending.created(key, m.Name)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			r.recorder.Eventf(ms, corev1.EventTypeWarning, "FailedCreate", "%v", err)
			return err
		}
		r.recorder.Eventf(ms, corev1.EventTypeNormal, "SuccessfulCreate", "Created %d machines", size)
		n -= size
	}
	return nil
}

// newMachine returns a Machine built from the set's template. It carries the Machine
// controller's finalizer from the start: that saves the controller a patch per Machine, and a
// delete that comes before the first reconcile still waits for the delete path.
func newMachine(ms *v1alpha1.MachineSet) *v1alpha1.Machine {
	t := ms.Spec.Template.DeepCopy()
	return &v1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    ms.Name + "-",
			Namespace:       ms.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ms, v1alpha1.GroupVersion.WithKind("MachineSet"))},
			Finalizers:      []string{v1alpha1.MachineFinalizer},
		},
		Spec: t.Spec,
	}
}

// deleteMachines deletes the n Machines that should go first.
func (r *Reconciler) deleteMachines(ctx context.Context, ms *v1alpha1.MachineSet, sm *setMachines, n int) error {
	key := client.ObjectKeyFromObject(ms).String()
	victims := pickForDeletion(sm.active, v1alpha1.MachineSetDeletePolicy(ms.Spec.DeletePolicy), n)
	errs := make([]error, len(victims))
	sem := make(chan struct{}, deleteParallelism)
	var wg sync.WaitGroup
	for i, m := range victims {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
				errs[i] = fmt.Errorf("deleting machine %s/%s: %w", m.Namespace, m.Name, err)
				return
			}
			r.pending.deleted(key, m.Name)
		}()
	}
	wg.Wait()
	err := errors.Join(errs...)
	if len(victims) > 0 {
		r.recorder.Eventf(ms, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted machines: %d requested", len(victims))
	}
	return err
}
