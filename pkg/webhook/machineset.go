package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

type machineSetValidator struct{ opts Options }

func (v machineSetValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	ms, ok := obj.(*v1alpha1.MachineSet)
	if !ok {
		return nil, fmt.Errorf("expected a MachineSet, got %T", obj)
	}
	return nil, invalid("MachineSet", ms.Name, v.opts.ValidateMachineSet(ms))
}

func (v machineSetValidator) ValidateUpdate(ctx context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return v.ValidateCreate(ctx, obj)
}

func (machineSetValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// ValidateMachineSet checks a MachineSet without calling any cloud.
func (o Options) ValidateMachineSet(ms *v1alpha1.MachineSet) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateReplicas(ms.Spec.Replicas, spec.Child("replicas"))
	errs = append(errs, validateSelector(&ms.Spec.Selector, ms.Spec.Template.Labels, spec)...)
	errs = append(errs, o.ValidateMachineSpec(ms.Namespace, &ms.Spec.Template.Spec, spec.Child("template", "spec"))...)
	errs = append(errs, templateOwned(&ms.Spec.Template, spec.Child("template"))...)
	if ms.Spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(spec.Child("minReadySeconds"), ms.Spec.MinReadySeconds, "must not be negative"))
	}
	return errs
}
