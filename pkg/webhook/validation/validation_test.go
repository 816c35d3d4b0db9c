package validation_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/webhook/validation"
)

const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHeagoWhp+qCo6N6quw4QUZuInitGyf+xLCR3ldL1yGx"

func deployment(mutate func(md *v1alpha1.MachineDeployment)) *v1alpha1.MachineDeployment {
	md := &v1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "kube-system"}}
	md.Spec.Selector.MatchLabels = map[string]string{"workerset": "pool"}
	md.Spec.Template.Labels = map[string]string{"workerset": "pool"}
	md.Spec.Template.Spec.Versions.Kubelet = "1.36.3"
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"openstack",
		"cloudProviderSpec":{"flavor":"f"},"operatingSystem":"ubuntu","sshPublicKeys":["` + key + `"]}`)}
	if mutate != nil {
		mutate(md)
	}
	return md
}

// TestMachineDeployment: the rules a MachineDeployment is admitted by, each error with its path,
// and the provider's check called on cloudProviderSpec with the Machine's namespace.
func TestMachineDeployment(t *testing.T) {
	var seen []string
	checks := validation.Checks{Specs: map[string]cloud.SpecCheck{"openstack": func(ns string, raw json.RawMessage, p *field.Path) field.ErrorList {
		seen = append(seen, ns+" "+p.String()+" "+string(raw))
		return field.ErrorList{field.Forbidden(p.Child("flavor"), "the provider says no")}
	}}}
	zero := intstr.FromInt32(0)
	for _, tc := range []struct {
		name   string
		mutate func(md *v1alpha1.MachineDeployment)
		want   []string
	}{
		{"the provider's check", nil, []string{"spec.template.spec.providerSpec.value.cloudProviderSpec.flavor: Forbidden: the provider says no"}},
		{"selector and labels", func(md *v1alpha1.MachineDeployment) {
			md.Spec.Template.Labels = map[string]string{"workerset": "other"}
		},
			[]string{"spec.template.metadata.labels: Invalid value", "the provider says no"}},
		{"rollout that cannot progress", func(md *v1alpha1.MachineDeployment) {
			md.Spec.Strategy = &v1alpha1.MachineDeploymentStrategy{RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &zero}}
		}, []string{"the provider says no", "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0\": may not be 0 when maxSurge is 0"}},
		{"the controller's state in a template", func(md *v1alpha1.MachineDeployment) {
			md.Spec.Template.Annotations = map[string]string{"openstack" + cloud.StateAnnotationSuffix: "{}"}
		}, []string{"the provider says no", "spec.template.metadata.annotations[openstack.slipway.dev/state]: Forbidden"}},
		{"kubelet outside the window, operating system, key", func(md *v1alpha1.MachineDeployment) {
			md.Spec.Template.Spec.Versions.Kubelet = "1.20.0"
			md.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"openstack","operatingSystem":"windows","sshPublicKeys":["nope"]}`)
		}, []string{"operatingSystem: Unsupported value: \"windows\"", "the provider says no", "sshPublicKeys[0]: Invalid value", "spec.template.spec.versions.kubelet: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			errs := checks.MachineDeployment(deployment(tc.mutate))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("error %d is %q, want %q", i, e.Error(), tc.want[i])
				}
			}
			if len(seen) != 1 || !strings.HasPrefix(seen[0], "kube-system spec.template.spec.providerSpec.value.cloudProviderSpec ") {
				t.Errorf("the provider's check saw %q", seen)
			}
		})
	}
}

func TestDeletionPolicy(t *testing.T) {
	meta := &metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.DeletionPolicyAnnotation: v1alpha1.DeletionPolicyForced}}
	if errs := validation.DeletionPolicy(meta, field.NewPath("metadata")); len(errs) != 0 {
		t.Errorf("forced: %v", errs)
	}
	meta.Annotations[v1alpha1.DeletionPolicyAnnotation] = "later"
	errs := validation.DeletionPolicy(meta, field.NewPath("metadata"))
	if len(errs) != 1 || errs[0].Error() != `metadata.annotations[cluster.k8s.io/deletion-policy]: Unsupported value: "later": supported values: "graceful", "unsafe", "forced"` {
		t.Errorf("later: %v", errs)
	}
}

// withOS sets the operating system of md's template.
func withOS(name string) func(md *v1alpha1.MachineDeployment) {
	return func(md *v1alpha1.MachineDeployment) {
		md.Spec.Template.Spec.ProviderSpec.Value.Raw = []byte(`{"cloudProvider":"openstack","cloudProviderSpec":{"flavor":"f"},` +
			`"operatingSystem":"` + name + `","sshPublicKeys":["` + key + `"]}`)
	}
}

// TestOperatingSystems: admission accepts the operating systems slipway boots
// (v1alpha1.OperatingSystems) and refuses the others, naming the field and the list; an update
// that keeps an operating system admitted before the list narrowed is not refused for it (the set
// can still be scaled down and deleted), and one that changes to an unsupported one is.
func TestOperatingSystems(t *testing.T) {
	const field = "spec.template.spec.providerSpec.value.operatingSystem"
	refused := func(name string) string {
		return field + `: Unsupported value: "` + name + `": supported values: "ubuntu", "debian"`
	}
	for _, name := range []string{"ubuntu", "debian"} {
		if errs := (validation.Checks{}).MachineDeployment(deployment(withOS(name))); len(errs) != 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
	for _, name := range []string{"flatcar", "rhel", "rockylinux"} {
		errs := (validation.Checks{}).MachineDeployment(deployment(withOS(name)))
		if len(errs) != 1 || errs[0].Error() != refused(name) {
			t.Errorf("%s: %v, want %s", name, errs, refused(name))
		}
		set := &v1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "kube-system"}}
		set.Spec.Selector, set.Spec.Template = deployment(nil).Spec.Selector, deployment(withOS(name)).Spec.Template
		if errs := (validation.Checks{}).MachineSet(set); len(errs) != 1 || errs[0].Error() != refused(name) {
			t.Errorf("MachineSet on %s: %v, want %s", name, errs, refused(name))
		}
	}
	for _, tc := range []struct {
		name     string
		from, to string
		replicas int32
		want     string
	}{
		{"flatcar kept, scaled to zero", "flatcar", "flatcar", 0, ""},
		{"ubuntu to flatcar", "ubuntu", "flatcar", 1, refused("flatcar")},
		{"flatcar to rhel", "flatcar", "rhel", 1, refused("rhel")},
		{"flatcar to debian", "flatcar", "debian", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, md := deployment(withOS(tc.from)), deployment(withOS(tc.to))
			md.Spec.Replicas = &tc.replicas
			errs := (validation.Checks{}).MachineDeploymentUpdate(old, md)
			if got := errs.ToAggregate(); (got == nil) != (tc.want == "") || got != nil && got.Error() != tc.want {
				t.Errorf("MachineDeploymentUpdate = %v, want %q", got, tc.want)
			}
			oldSet := &v1alpha1.MachineSet{Spec: v1alpha1.MachineSetSpec{Selector: old.Spec.Selector, Template: old.Spec.Template}}
			set := &v1alpha1.MachineSet{Spec: v1alpha1.MachineSetSpec{Selector: md.Spec.Selector, Template: md.Spec.Template, Replicas: md.Spec.Replicas}}
			if got := (validation.Checks{}).MachineSetUpdate(oldSet, set).ToAggregate(); (got == nil) != (tc.want == "") || got != nil && got.Error() != tc.want {
				t.Errorf("MachineSetUpdate = %v, want %q", got, tc.want)
			}
		})
	}
}
