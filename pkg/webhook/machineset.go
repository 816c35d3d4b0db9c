package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

type machineSetValidator struct{ opts Options }

func (v machineSetValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	ms, ok := obj.(*v1alpha1.MachineSet)
	if !ok {
		return nil, fmt.Errorf("expected a MachineSet, got %T", obj)
	}
	return nil, invalid("MachineSet", ms.Name, v.opts.checks().MachineSet(ms))
}

func (v machineSetValidator) ValidateUpdate(_ context.Context, oldObj, obj runtime.Object) (admission.Warnings, error) {
	old, ok1 := oldObj.(*v1alpha1.MachineSet)
	ms, ok2 := obj.(*v1alpha1.MachineSet)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("expected MachineSets, got %T and %T", oldObj, obj)
	}
	return nil, invalid("MachineSet", ms.Name, v.opts.checks().MachineSetUpdate(old, ms))
}

func (machineSetValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}
