package webhook

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	return nil, invalid("MachineDeployment", md.Name, v.opts.ValidateMachineDeployment(md))
}

func (v machineDeploymentValidator) ValidateUpdate(ctx context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return v.ValidateCreate(ctx, obj)
}

func (machineDeploymentValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

// ValidateMachineDeployment checks a MachineDeployment without calling any cloud.
func (o Options) ValidateMachineDeployment(md *v1alpha1.MachineDeployment) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateReplicas(md.Spec.Replicas, spec.Child("replicas"))
	errs = append(errs, validateSelector(&md.Spec.Selector, md.Spec.Template.Labels, spec)...)
	errs = append(errs, o.ValidateMachineSpec(md.Namespace, &md.Spec.Template.Spec, spec.Child("template", "spec"))...)
	errs = append(errs, templateOwned(&md.Spec.Template, spec.Child("template"))...)
	for _, f := range []struct {
		v    *int32
		name string
	}{{md.Spec.MinReadySeconds, "minReadySeconds"}, {md.Spec.RevisionHistoryLimit, "revisionHistoryLimit"}} {
		if f.v != nil && *f.v < 0 {
			errs = append(errs, field.Invalid(spec.Child(f.name), *f.v, "must not be negative"))
		}
	}
	if d := md.Spec.ProgressDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), *d, "must be positive"))
	}
	if s := md.Spec.Strategy; s != nil && s.RollingUpdate != nil {
		errs = append(errs, validateRollingUpdate(s.RollingUpdate, spec.Child("strategy", "rollingUpdate"))...)
	}
	return errs
}

// validateRollingUpdate accepts what Deployments accept: non-negative numbers or percentages,
// maxUnavailable at most 100%, and not both 0.
func validateRollingUpdate(ru *v1alpha1.MachineRollingUpdateDeployment, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	zero := func(v *intstr.IntOrString) bool {
		return v != nil && (v.Type == intstr.Int && v.IntVal == 0 || v.Type == intstr.String && v.StrVal == "0%")
	}
	for _, f := range []struct {
		v    *intstr.IntOrString
		name string
	}{{ru.MaxSurge, "maxSurge"}, {ru.MaxUnavailable, "maxUnavailable"}} {
		if f.v == nil {
			continue
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(f.v, 100, true)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child(f.name), f.v.String(), "must be an integer or a percentage such as 25%"))
		case n < 0:
			errs = append(errs, field.Invalid(p.Child(f.name), f.v.String(), "must not be negative"))
		case f.name == "maxUnavailable" && f.v.Type == intstr.String && n > 100:
			errs = append(errs, field.Invalid(p.Child(f.name), f.v.String(), "must not be more than 100%"))
		}
	}
	surge0 := ru.MaxSurge == nil || zero(ru.MaxSurge) // maxSurge defaults to 1, but an explicit 0 counts
	if ru.MaxSurge != nil && surge0 && zero(ru.MaxUnavailable) {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), ru.MaxUnavailable.String(),
			"may not be 0 when maxSurge is 0: the rollout could never replace a machine"))
	}
	return errs
}

func ptr[T any](v T) *T { return &v }
