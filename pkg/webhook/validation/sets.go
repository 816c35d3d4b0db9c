package validation

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// MachineSet checks a MachineSet without calling any cloud.
func (c Checks) MachineSet(ms *v1alpha1.MachineSet) field.ErrorList {
	spec := field.NewPath("spec")
	errs := c.set(ms.Namespace, ms.Spec.Replicas, &ms.Spec.Selector, &ms.Spec.Template, spec)
	if ms.Spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(spec.Child("minReadySeconds"), ms.Spec.MinReadySeconds, "must not be negative"))
	}
	return errs
}

// MachineDeployment checks a MachineDeployment without calling any cloud.
func (c Checks) MachineDeployment(md *v1alpha1.MachineDeployment) field.ErrorList {
	spec := field.NewPath("spec")
	errs := c.set(md.Namespace, md.Spec.Replicas, &md.Spec.Selector, &md.Spec.Template, spec)
	errs = append(errs, notNegative(md.Spec.MinReadySeconds, spec.Child("minReadySeconds"))...)
	errs = append(errs, notNegative(md.Spec.RevisionHistoryLimit, spec.Child("revisionHistoryLimit"))...)
	if d := md.Spec.ProgressDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), *d, "must be positive"))
	}
	if s := md.Spec.Strategy; s != nil && s.RollingUpdate != nil {
		errs = append(errs, rollingUpdate(s.RollingUpdate, spec.Child("strategy", "rollingUpdate"))...)
	}
	return errs
}

// MachineSetUpdate checks an update of old to ms as MachineSet checks a create, except for an
// operating system the set already had (see keptOperatingSystem).
func (c Checks) MachineSetUpdate(old, ms *v1alpha1.MachineSet) field.ErrorList {
	return keptOperatingSystem(c.MachineSet(ms), &old.Spec.Template.Spec, &ms.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
}

// MachineDeploymentUpdate checks an update of old to md as MachineDeployment checks a create,
// except for an operating system the deployment already had (see keptOperatingSystem).
func (c Checks) MachineDeploymentUpdate(old, md *v1alpha1.MachineDeployment) field.ErrorList {
	return keptOperatingSystem(c.MachineDeployment(md), &old.Spec.Template.Spec, &md.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
}

// keptOperatingSystem drops from errs the refusal of an unsupported operating system that the
// template at p already had before the update. A set or deployment admitted when the webhook
// still accepted flatcar, rhel or rockylinux can then still be scaled down, have its finalizers
// removed and be deleted; none of its Machines can be created (each Machine is checked as a
// create), and changing the template to another unsupported operating system is refused.
func keptOperatingSystem(errs field.ErrorList, old, spec *v1alpha1.MachineSpec, p *field.Path) field.ErrorList {
	was, err1 := v1alpha1.DecodeProviderConfig(old.ProviderSpec)
	is, err2 := v1alpha1.DecodeProviderConfig(spec.ProviderSpec)
	if err1 != nil || err2 != nil || was.OperatingSystem != is.OperatingSystem {
		return errs
	}
	at := p.Child("providerSpec", "value", "operatingSystem").String()
	return slices.DeleteFunc(errs, func(e *field.Error) bool { return e.Type == field.ErrorTypeNotSupported && e.Field == at })
}

// set checks what sets and deployments share: replicas, a selector that matches the
// template, the template's Machine spec, and no controller-owned fields in the template.
func (c Checks) set(namespace string, replicas *int32, sel *metav1.LabelSelector, tmpl *v1alpha1.MachineTemplateSpec, spec *field.Path) field.ErrorList {
	errs := notNegative(replicas, spec.Child("replicas"))
	errs = append(errs, selector(sel, tmpl.Labels, spec)...)
	errs = append(errs, c.MachineSpec(namespace, &tmpl.Spec, spec.Child("template", "spec"))...)
	return append(errs, templateOwned(tmpl, spec.Child("template"))...)
}

// templateOwned refuses the controller's fields in a template: every Machine made from it
// would carry them, with the controller as its writer.
func templateOwned(tmpl *v1alpha1.MachineTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if tmpl.Spec.ProviderID != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "providerID"),
			"names one Machine's server and is set by the machine-controller; a template may not carry it"))
	}
	for _, k := range StateKeys(tmpl.Annotations) {
		errs = append(errs, field.Forbidden(p.Child("metadata", "annotations").Key(k),
			"records what the machine-controller allocated for one Machine; a template may not carry it"))
	}
	return errs
}

// rollingUpdate accepts what Deployments accept: non-negative numbers or percentages,
// maxUnavailable at most 100%, and not both 0.
func rollingUpdate(ru *v1alpha1.MachineRollingUpdateDeployment, p *field.Path) field.ErrorList {
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
