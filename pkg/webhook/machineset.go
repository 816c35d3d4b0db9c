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

func (v machineSetValidator) ValidateUpdate(ctx context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return v.ValidateCreate(ctx, obj)
}

func (machineSetValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}
