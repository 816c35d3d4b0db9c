package webhook

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// operatingSystems are the values of providerSpec.value.operatingSystem that existing manifests
// use. Only ubuntu and debian can be bootstrapped today; the controller reports the others as a
// failed Machine with a message, because admission must not reject manifests users already have.
var operatingSystems = map[string]bool{"ubuntu": true, "debian": true, "flatcar": true, "rhel": true, "rockylinux": true}

var deletionPolicies = map[string]bool{
	v1alpha1.DeletionPolicyGraceful: true, v1alpha1.DeletionPolicyUnsafe: true, v1alpha1.DeletionPolicyForced: true,
}

type machineValidator struct{ opts Options }

// ValidateCreate checks the spec, and that only the controller sets its own fields
// (spec.providerID, the state annotations).
func (v machineValidator) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	m, ok := obj.(*v1alpha1.Machine)
	if !ok {
		return nil, fmt.Errorf("expected a Machine, got %T", obj)
	}
	errs := v.opts.ValidateMachineSpec(m.Namespace, &m.Spec, field.NewPath("spec"))
	errs = append(errs, validateDeletionPolicy(&m.ObjectMeta)...)
	errs = append(errs, v.opts.checkWriter(ctx, nil, m)...)
	return nil, invalid("Machine", m.Name, errs)
}

// ValidateUpdate keeps spec immutable, except spec.providerID: a changed spec would describe a
// different server than the one that exists, but providerID only records which server that
// is. It is the controller's field, set when the server is created and changed when the
// provider replaces a failed server under the same Machine, and only the controller may change
// it (or the state annotations). Once set it may not be removed: the controller takes a
// Machine without one for a Machine that never had a server.
func (v machineValidator) ValidateUpdate(ctx context.Context, oldObj, obj runtime.Object) (admission.Warnings, error) {
	old, ok1 := oldObj.(*v1alpha1.Machine)
	m, ok2 := obj.(*v1alpha1.Machine)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("expected Machines, got %T and %T", oldObj, obj)
	}
	errs := validateDeletionPolicy(&m.ObjectMeta)
	errs = append(errs, v.opts.checkWriter(ctx, old, m)...)
	if old.Spec.ProviderID != nil && (m.Spec.ProviderID == nil || *m.Spec.ProviderID == "") {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"),
			"may not be removed once set; it names the Machine's server"))
	}
	oldSpec, newSpec := old.Spec.DeepCopy(), m.Spec.DeepCopy()
	oldSpec.ProviderID, newSpec.ProviderID = nil, nil
	if !equality.Semantic.DeepEqual(oldSpec, newSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"is immutable after creation (except providerID, which the controller keeps); replace the Machine, or change its MachineDeployment"))
	}
	return nil, invalid("Machine", m.Name, errs)
}

func (machineValidator) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

func validateDeletionPolicy(meta *metav1.ObjectMeta) field.ErrorList {
	if p, ok := meta.Annotations[v1alpha1.DeletionPolicyAnnotation]; ok && !deletionPolicies[p] {
		return field.ErrorList{field.NotSupported(field.NewPath("metadata", "annotations").Key(v1alpha1.DeletionPolicyAnnotation),
			p, []string{v1alpha1.DeletionPolicyGraceful, v1alpha1.DeletionPolicyUnsafe, v1alpha1.DeletionPolicyForced})}
	}
	return nil
}

// ValidateMachineSpec checks what can be checked without a cloud: the providerSpec envelope,
// the provider's own admission check of its cloudProviderSpec (what a Machine in namespace may
// choose), the kubelet version window, SSH keys and taints.
func (o Options) ValidateMachineSpec(namespace string, spec *v1alpha1.MachineSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	pv := p.Child("providerSpec", "value")
	pc, err := v1alpha1.DecodeProviderConfig(spec.ProviderSpec)
	if err != nil {
		errs = append(errs, field.Invalid(pv, "", err.Error()))
	} else {
		if pc.CloudProvider == "" {
			errs = append(errs, field.Required(pv.Child("cloudProvider"), "names the cloud, e.g. openstack"))
		}
		if !operatingSystems[pc.OperatingSystem] {
			errs = append(errs, field.NotSupported(pv.Child("operatingSystem"), pc.OperatingSystem, keys(operatingSystems)))
		}
		errs = append(errs, o.checkSpec(namespace, pc, pv)...)
		for i, k := range pc.SSHPublicKeys {
			if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil || len(strings.TrimSpace(string(rest))) > 0 {
				errs = append(errs, field.Invalid(pv.Child("sshPublicKeys").Index(i), truncate(k), "is not one SSH public key in authorized_keys format"))
			}
		}
	}
	if err := v1alpha1.CheckKubeletVersion(spec.Versions.Kubelet); err != nil {
		errs = append(errs, field.Invalid(p.Child("versions", "kubelet"), spec.Versions.Kubelet, err.Error()))
	}
	for i, t := range spec.Taints {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("taints").Index(i).Child("effect"), t.Effect,
				[]string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("taints").Index(i).Child("key"), ""))
		}
	}
	return errs
}

func validateReplicas(r *int32, p *field.Path) field.ErrorList {
	if r != nil && *r < 0 {
		return field.ErrorList{field.Invalid(p, *r, "must not be negative")}
	}
	return nil
}

// validateSelector requires a non-empty selector that matches the template's labels; otherwise
// the set would never count the Machines it creates and would create them forever.
func validateSelector(sel *metav1.LabelSelector, tmplLabels map[string]string, spec *field.Path) field.ErrorList {
	p := spec.Child("selector")
	s, err := metav1.LabelSelectorAsSelector(sel)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, sel, err.Error())}
	case s.Empty():
		return field.ErrorList{field.Required(p, "must select the template's labels")}
	case !s.Matches(labels.Set(tmplLabels)):
		return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), tmplLabels,
			fmt.Sprintf("must match the selector %s", s.String()))}
	}
	return nil
}

// invalid turns field errors into the API's 422 Invalid error, naming every field at fault.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: kind}, name, errs)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for _, k := range []string{"ubuntu", "debian", "flatcar", "rhel", "rockylinux"} {
		if m[k] {
			out = append(out, k)
		}
	}
	return out
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
