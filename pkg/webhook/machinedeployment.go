package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

type machineDeploymentDefaulter struct{}

// Default fills in what the controller would assume anyway, so that `kubectl get -o yaml` shows
// the values in force: 1 replica, RollingUpdate with maxSurge 1 and maxUnavailable 0,
// minReadySeconds 0, revisionHistoryLimit 1, progressDeadlineSeconds 600, and a selector equal
// to the template labels when none is given.
func (machineDeploymentDefaulter) Default(_ context.Context, obj runtime.Object) error {
	md, ok := obj.(*v1alpha1.MachineDeployment)
	if !ok {
		return fmt.Errorf("expected a MachineDeployment, got %T", obj)
	}
	s := &md.Spec
	if s.Replicas == nil {
		s.Replicas = ptr(int32(1))
	}
	if s.Strategy == nil {
		s.Strategy = &v1alpha1.MachineDeploymentStrategy{}
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = v1alpha1.RollingUpdateMachineDeploymentStrategyType
	}
	if s.Strategy.RollingUpdate == nil {
		s.Strategy.RollingUpdate = &v1alpha1.MachineRollingUpdateDeployment{}
	}
	if s.Strategy.RollingUpdate.MaxSurge == nil {
		s.Strategy.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(1))
	}
	if s.Strategy.RollingUpdate.MaxUnavailable == nil {
		s.Strategy.RollingUpdate.MaxUnavailable = ptr(intstr.FromInt32(0))
	}
	if s.MinReadySeconds == nil {
		s.MinReadySeconds = ptr(int32(0))
	}
	if s.RevisionHistoryLimit == nil {
		s.RevisionHistoryLimit = ptr(int32(1))
	}
	if s.ProgressDeadlineSeconds == nil {
		s.ProgressDeadlineSeconds = ptr(int32(600))
	}
	if len(s.Selector.MatchLabels) == 0 && len(s.Selector.MatchExpressions) == 0 && len(s.Template.Labels) > 0 {
		s.Selector.MatchLabels = map[string]string{}
		for k, v := range s.Template.Labels {
			s.Selector.MatchLabels[k] = v
		}
	}
	return nil
}

type machineDeploymentValidator struct{ opts Options }

func (v machineDeploymentValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	md, ok := obj.(*v1alpha1.MachineDeployment)
	if !ok {
		return nil, fmt.Errorf("expected a MachineDeployment, got %T", obj)
	}
	return nil, invalid("MachineDeployment", md.Name, v.opts.checks().MachineDeployment(md))
}

func (v machineDeploymentValidator) ValidateUpdate(_ context.Context, oldObj, obj runtime.Object) (admission.Warnings, error) {
	old, ok1 := oldObj.(*v1alpha1.MachineDeployment)
	md, ok2 := obj.(*v1alpha1.MachineDeployment)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("expected MachineDeployments, got %T and %T", oldObj, obj)
	}
	return nil, invalid("MachineDeployment", md.Name, v.opts.checks().MachineDeploymentUpdate(old, md))
}

func (machineDeploymentValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

func ptr[T any](v T) *T { return &v }
