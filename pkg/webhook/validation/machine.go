package validation

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Checks are admission's checks of Machines and of the templates of sets and deployments.
type Checks struct {
	// Specs are the providers' checks of cloudProviderSpec, by cloudProvider; a provider without
	// one gets no check of its spec here.
	Specs map[string]cloud.SpecCheck
}

var deletionPolicies = []string{v1alpha1.DeletionPolicyGraceful, v1alpha1.DeletionPolicyUnsafe, v1alpha1.DeletionPolicyForced}

// MachineSpec checks what can be checked without a cloud: the providerSpec envelope, the
// provider's own check of its cloudProviderSpec (what a Machine in namespace may choose), the
// kubelet version window, SSH keys and taints.
func (c Checks) MachineSpec(namespace string, spec *v1alpha1.MachineSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	pv := p.Child("providerSpec", "value")
	pc, err := v1alpha1.DecodeProviderConfig(spec.ProviderSpec)
	if err != nil {
		errs = append(errs, field.Invalid(pv, "", err.Error()))
	} else {
		if pc.CloudProvider == "" {
			errs = append(errs, field.Required(pv.Child("cloudProvider"), "names the cloud, e.g. openstack"))
		}
		if !slices.Contains(v1alpha1.OperatingSystems, pc.OperatingSystem) {
			errs = append(errs, field.NotSupported(pv.Child("operatingSystem"), pc.OperatingSystem, v1alpha1.OperatingSystems))
		}
		if check := c.Specs[pc.CloudProvider]; check != nil {
			errs = append(errs, check(namespace, pc.CloudProviderSpec, pv.Child("cloudProviderSpec"))...)
		}
		for i, k := range pc.SSHPublicKeys {
			if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil || len(strings.TrimSpace(string(rest))) > 0 {
				errs = append(errs, field.Invalid(pv.Child("sshPublicKeys").Index(i), truncate(k), "is not one SSH public key in authorized_keys format"))
			}
		}
	}
	if err := v1alpha1.CheckKubeletVersion(spec.Versions.Kubelet); err != nil {
		errs = append(errs, field.Invalid(p.Child("versions", "kubelet"), spec.Versions.Kubelet, err.Error()))
	}
	return append(errs, Taints(spec.Taints, p.Child("taints"))...)
}

// Taints checks the taints a Machine gives its Node (at path p): each has a key and an effect
// a Node can carry.
func Taints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range taints {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Index(i).Child("effect"), t.Effect,
				[]string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
		if t.Key == "" {
			errs = append(errs, field.Required(p.Index(i).Child("key"), ""))
		}
	}
	return errs
}

// DeletionPolicy checks a Machine's deletion policy annotation; meta is the Machine's metadata
// at path p.
func DeletionPolicy(meta *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	if v, ok := meta.Annotations[v1alpha1.DeletionPolicyAnnotation]; ok && !slices.Contains(deletionPolicies, v) {
		return field.ErrorList{field.NotSupported(p.Child("annotations").Key(v1alpha1.DeletionPolicyAnnotation), v, deletionPolicies)}
	}
	return nil
}

// StateKeys lists the providers' state annotation keys in any of the maps, sorted.
func StateKeys(maps ...map[string]string) []string {
	var keys []string
	for _, m := range maps {
		for k := range m {
			if strings.HasSuffix(k, cloud.StateAnnotationSuffix) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// notNegative refuses a negative count.
func notNegative(v *int32, p *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(p, *v, "must not be negative")}
	}
	return nil
}

// selector requires a non-empty selector that matches the template's labels; otherwise the
// set would never count the Machines it creates and would create them forever.
func selector(sel *metav1.LabelSelector, tmplLabels map[string]string, spec *field.Path) field.ErrorList {
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
