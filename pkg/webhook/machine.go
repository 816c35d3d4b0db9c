package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/webhook/validation"
)

type machineValidator struct{ opts Options }

// ValidateCreate checks the spec, and that only the controller sets its own fields
// (spec.providerID, the state annotations).
func (v machineValidator) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	m, ok := obj.(*v1alpha1.Machine)
	if !ok {
		return nil, fmt.Errorf("expected a Machine, got %T", obj)
	}
	errs := v.opts.checks().MachineSpec(m.Namespace, &m.Spec, field.NewPath("spec"))
	errs = append(errs, validation.DeletionPolicy(&m.ObjectMeta, field.NewPath("metadata"))...)
	errs = append(errs, v.opts.checkWriter(ctx, nil, m)...)
	return nil, invalid("Machine", m.Name, errs)
}

// ValidateUpdate keeps spec immutable, except spec.providerID and what the Node is given in
// place (spec.metadata's labels and annotations, spec.taints): a changed spec would describe a
// different server than the one that exists, but providerID only records which server that
// is, and the Node's labels, annotations and taints are the controller's to change on the Node
// at any time (its MachineSet changes them when its MachineDeployment's do). providerID is the
// controller's field, set when the server is created and changed when the provider replaces a
// failed server under the same Machine, and only the controller may change it (or the state
// annotations). Once set it may not be removed: the controller takes a Machine without one for
// a Machine that never had a server.
func (v machineValidator) ValidateUpdate(ctx context.Context, oldObj, obj runtime.Object) (admission.Warnings, error) {
	old, ok1 := oldObj.(*v1alpha1.Machine)
	m, ok2 := obj.(*v1alpha1.Machine)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("expected Machines, got %T and %T", oldObj, obj)
	}
	errs := validation.DeletionPolicy(&m.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, v.opts.checkWriter(ctx, old, m)...)
	if old.Spec.ProviderID != nil && (m.Spec.ProviderID == nil || *m.Spec.ProviderID == "") {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"),
			"may not be removed once set; it names the Machine's server"))
	}
	errs = append(errs, validation.Taints(m.Spec.Taints, field.NewPath("spec", "taints"))...)
	oldSpec, newSpec := old.Spec.DeepCopy(), m.Spec.DeepCopy()
	for _, s := range []*v1alpha1.MachineSpec{oldSpec, newSpec} {
		s.ProviderID, s.Labels, s.Annotations, s.Taints = nil, nil, nil, nil
	}
	if !equality.Semantic.DeepEqual(oldSpec, newSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"is immutable after creation (except providerID, which the controller keeps, and the Node's labels, annotations and taints); replace the Machine, or change its MachineDeployment"))
	}
	return nil, invalid("Machine", m.Name, errs)
}

func (machineValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns field errors into the API's 422 Invalid error, naming every field at fault.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: kind}, name, errs)
}
