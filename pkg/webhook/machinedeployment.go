package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

type machineDeploymentDefaulter struct{}

// Default fills in what the controller would assume anyway, so that `kubectl get -o yaml` shows
// the values in force: RollingUpdate with maxSurge 1 and maxUnavailable 0, minReadySeconds 0,
// revisionHistoryLimit 1, progressDeadlineSeconds 600, a selector equal to the template labels
// when none is given, and the replicas that replicasDefault gives.
func (machineDeploymentDefaulter) Default(ctx context.Context, obj runtime.Object) error {
	md, ok := obj.(*v1alpha1.MachineDeployment)
	if !ok {
		return fmt.Errorf("expected a MachineDeployment, got %T", obj)
	}
	s := &md.Spec
	if s.Replicas == nil {
		var old *v1alpha1.MachineDeployment
		if req, err := admission.RequestFromContext(ctx); err == nil && len(req.OldObject.Raw) > 0 {
			old = &v1alpha1.MachineDeployment{}
			if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
				return fmt.Errorf("reading the MachineDeployment being updated: %w", err)
			}
		}
		s.Replicas = ptr(replicasDefault(md, old))
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

// replicasDefault is the replicas of a MachineDeployment that sets none, as Cluster API defaults
// them: an update keeps the count the object has (a server-side apply that leaves out replicas, as
// slipway's does for a pool the cluster-autoscaler sizes, must not reset the autoscaler's count,
// and a field its last owner gave up is removed before admission sees it); a new one starts at
// the autoscaler's minimum size when it has one, else at 1.
func replicasDefault(md, old *v1alpha1.MachineDeployment) int32 {
	if old != nil && old.Spec.Replicas != nil {
		return *old.Spec.Replicas
	}
	if v, ok := md.Annotations[v1alpha1.AutoscalerMinSizeAnnotation]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
			return int32(n)
		}
	}
	return 1
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
