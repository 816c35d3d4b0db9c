package webhook_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/test/envtest"
)

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"

func providerSpec(mutate func(map[string]any)) v1alpha1.ProviderSpec {
	v := map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": map[string]any{"flavor": "m1.small"},
		"operatingSystem": "ubuntu", "sshPublicKeys": []string{testKey}}
	if mutate != nil {
		mutate(v)
	}
	raw, _ := json.Marshal(v)
	return v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}
}

// withCloudSpec is a valid Machine spec with the given cloudProviderSpec.
func withCloudSpec(cps map[string]any) v1alpha1.MachineSpec {
	s := validSpec()
	s.ProviderSpec = providerSpec(func(v map[string]any) { v["cloudProviderSpec"] = cps })
	return s
}

func validSpec() v1alpha1.MachineSpec {
	return v1alpha1.MachineSpec{ProviderSpec: providerSpec(nil), Versions: v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"}}
}

// TestAdmissionRejectsBadSpecs sends bad MachineDeployments, MachineSets and Machines through
// the real API server and expects 422 Invalid naming the field at fault.
func TestAdmissionRejectsBadSpecs(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	tests := []struct {
		name   string
		obj    func() client.Object
		field  string
		reason string
	}{
		{"selector does not match labels", func() client.Object {
			md := validMD(ns)
			md.Spec.Selector.MatchLabels = map[string]string{"group": "b"}
			return md
		}, "spec.template.metadata.labels", "must match the selector"},
		{"maxSurge and maxUnavailable both 0", func() client.Object {
			md := validMD(ns)
			md.Spec.Strategy = &v1alpha1.MachineDeploymentStrategy{RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{
				MaxSurge: ptr(intstr.FromInt32(0)), MaxUnavailable: ptr(intstr.FromString("0%"))}}
			return md
		}, "spec.strategy.rollingUpdate.maxUnavailable", "may not be 0"},
		{"maxSurge not a number", func() client.Object {
			md := validMD(ns)
			md.Spec.Strategy = &v1alpha1.MachineDeploymentStrategy{RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{
				MaxSurge: ptr(intstr.FromString("lots"))}}
			return md
		}, "spec.strategy.rollingUpdate.maxSurge", "integer or a percentage"},
		{"maxUnavailable over 100%", func() client.Object {
			md := validMD(ns)
			md.Spec.Strategy = &v1alpha1.MachineDeploymentStrategy{RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{
				MaxUnavailable: ptr(intstr.FromString("150%"))}}
			return md
		}, "spec.strategy.rollingUpdate.maxUnavailable", "100%"},
		{"kubelet not semver", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.Versions.Kubelet = "latest"
			return md
		}, "spec.template.spec.versions.kubelet", "not a semantic version"},
		{"kubelet too new", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.Versions.Kubelet = "1.38.0"
			return md
		}, "spec.template.spec.versions.kubelet", v1alpha1.SupportedKubernetesMinors},
		{"SSH key does not parse", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.ProviderSpec = providerSpec(func(v map[string]any) { v["sshPublicKeys"] = []string{"ssh-rsa AAAA not-a-key"} })
			return md
		}, "spec.template.spec.providerSpec.value.sshPublicKeys[0]", "SSH public key"},
		{"no cloudProvider", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.ProviderSpec = providerSpec(func(v map[string]any) { delete(v, "cloudProvider") })
			return md
		}, "spec.template.spec.providerSpec.value.cloudProvider", "Required"},
		{"unknown operating system", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.ProviderSpec = providerSpec(func(v map[string]any) { v["operatingSystem"] = "windows" })
			return md
		}, "spec.template.spec.providerSpec.value.operatingSystem", "Unsupported value"},
		{"an operating system slipway does not boot", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.ProviderSpec = providerSpec(func(v map[string]any) { v["operatingSystem"] = "flatcar" })
			return md
		}, "spec.template.spec.providerSpec.value.operatingSystem", `supported values: "ubuntu", "debian"`},
		{"a Machine on rhel", func() client.Object {
			s := validSpec()
			s.ProviderSpec = providerSpec(func(v map[string]any) { v["operatingSystem"] = "rhel" })
			return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns}, Spec: s}
		}, "spec.providerSpec.value.operatingSystem", `supported values: "ubuntu", "debian"`},
		{"bad taint effect", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "a", Effect: "Sometimes"}}
			return md
		}, "spec.template.spec.taints[0].effect", "Unsupported value"},
		{"machineset selector mismatch", func() client.Object {
			md := validMD(ns)
			return &v1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: ns},
				Spec: v1alpha1.MachineSetSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}, Template: md.Spec.Template}}
		}, "spec.template.metadata.labels", "must match the selector"},
		{"machine with bad deletion policy", func() client.Object {
			return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns,
				Annotations: map[string]string{v1alpha1.DeletionPolicyAnnotation: "yolo"}}, Spec: validSpec()}
		}, "metadata.annotations[cluster.k8s.io/deletion-policy]", "Unsupported value"},
		{"machine naming its own Keystone", func() client.Object {
			return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns}, Spec: withCloudSpec(map[string]any{
				"flavor": "m1.small", "identityEndpoint": "https://keystone.attacker.example/v3"})}
		}, "spec.providerSpec.value.cloudProviderSpec.identityEndpoint", "come only from the machine-controller's configuration"},
		{"template naming a user", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec = withCloudSpec(map[string]any{"flavor": "m1.small", "region": "elsewhere", "username": "admin"})
			return md
		}, "spec.template.spec.providerSpec.value.cloudProviderSpec.username", "SLIPWAY_ALLOW_MACHINE_CLOUD=true"},
		{"set naming a password", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec = withCloudSpec(map[string]any{"flavor": "m1.small", "password": "hunter2"})
			return &v1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: ns},
				Spec: v1alpha1.MachineSetSpec{Selector: md.Spec.Selector, Template: md.Spec.Template}}
		}, "spec.template.spec.providerSpec.value.cloudProviderSpec.password", "Forbidden"},
		{"reference into another namespace", func() client.Object {
			return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns}, Spec: withCloudSpec(map[string]any{
				"flavor": map[string]any{"configMapKeyRef": map[string]any{"namespace": "kube-system", "name": "x", "key": "y"}}})}
		}, "spec.providerSpec.value.cloudProviderSpec.flavor.configMapKeyRef.namespace", "the Machine's own namespace"},
		{"a Secret for a field that is no credential", func() client.Object {
			return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns}, Spec: withCloudSpec(map[string]any{
				"flavor": map[string]any{"secretKeyRef": map[string]any{"name": "x", "key": "y"}}})}
		}, "spec.providerSpec.value.cloudProviderSpec.flavor.secretKeyRef", "only credential fields"},
		{"template with a providerID", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Spec.ProviderID = ptr("openstack:///a-control-plane-server")
			return md
		}, "spec.template.spec.providerID", "a template may not carry it"},
		{"template with a provider state", func() client.Object {
			md := validMD(ns)
			md.Spec.Template.Annotations = map[string]string{"openstack.slipway.dev/state": `{"serverID":"x"}`}
			return md
		}, "spec.template.metadata.annotations[openstack.slipway.dev/state]", "a template may not carry it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tt.obj(), client.DryRunAll)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create = %v, want 422 Invalid", err)
			}
			for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
				if c.Field == tt.field && strings.Contains(c.Message, tt.reason) {
					return
				}
			}
			t.Fatalf("no cause on %s containing %q in: %v", tt.field, tt.reason, err)
		})
	}
	if err := env.Client.Create(context.Background(), validMD(ns), client.DryRunAll); err != nil {
		t.Fatalf("the valid MachineDeployment was rejected: %v", err)
	}
}

// TestMachineSpecImmutable: after create, only the Node's labels, annotations and taints (in
// place, taints still checked) and spec.providerID may change, the latter only by the
// controller: set, and changed when the controller's provider replaces the server, but never
// removed, nor changed together with anything else.
func TestMachineSpecImmutable(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	ctrl := controllerClient(t, env)
	m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: env.Namespace(t)}, Spec: validSpec()}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		change  func(m *v1alpha1.Machine)
		allowed bool
	}{
		{"kubelet version", func(m *v1alpha1.Machine) { m.Spec.Versions.Kubelet = "1.37.0" }, false},
		{"node labels, in place", func(m *v1alpha1.Machine) { m.Spec.Labels = map[string]string{"a": "b"} }, true},
		{"node taints, in place", func(m *v1alpha1.Machine) {
			m.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		}, true},
		{"a taint without an effect", func(m *v1alpha1.Machine) { m.Spec.Taints = []corev1.Taint{{Key: "k"}} }, false},
		{"the Node's labels with the kubelet version", func(m *v1alpha1.Machine) {
			m.Spec.Labels, m.Spec.Versions.Kubelet = map[string]string{"a": "c"}, "1.37.0"
		}, false},
		{"providerID set", func(m *v1alpha1.Machine) { m.Spec.ProviderID = ptr("openstack:///1") }, true},
		{"providerID changed to a replacement server", func(m *v1alpha1.Machine) { m.Spec.ProviderID = ptr("openstack:///2") }, true},
		{"providerID changed with the kubelet version", func(m *v1alpha1.Machine) {
			m.Spec.ProviderID, m.Spec.Versions.Kubelet = ptr("openstack:///3"), "1.37.0"
		}, false},
		{"providerID removed", func(m *v1alpha1.Machine) { m.Spec.ProviderID = nil }, false},
		{"providerID emptied", func(m *v1alpha1.Machine) { m.Spec.ProviderID = ptr("") }, false},
		{"annotations", func(m *v1alpha1.Machine) { m.Annotations = map[string]string{v1alpha1.MaintenanceAnnotation: "true"} }, true},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if !env.Get(t, m) {
				t.Fatal("machine gone")
			}
			s.change(m)
			err := ctrl.Update(ctx, m)
			switch {
			case s.allowed && err != nil:
				t.Fatalf("update rejected: %v", err)
			case !s.allowed && !apierrors.IsInvalid(err):
				t.Fatalf("update = %v, want 422 Invalid (spec is immutable)", err)
			}
		})
	}
}

// controllerClient is a client that authenticates as the machine-controller.
func controllerClient(t *testing.T, env *envtest.Env) client.Client {
	t.Helper()
	c, err := client.New(env.ControllerConfig, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestControllerFieldsOnlyFromTheController: spec.providerID and the provider's state annotation
// name the server (and Node) that deleting the Machine deletes. Anyone else who may write
// Machines, cluster admins included, is refused when setting or changing them, on create and
// update; other annotations stay theirs. The controller itself may.
func TestControllerFieldsOnlyFromTheController(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	ns := env.Namespace(t)
	ctrl := controllerClient(t, env)
	const state = "openstack.slipway.dev/state"
	forged := func(name string) *v1alpha1.Machine {
		return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: validSpec()}
	}
	wantForbidden := func(t *testing.T, err error, field string) {
		t.Helper()
		if !apierrors.IsInvalid(err) {
			t.Fatalf("got %v, want 422 Invalid on %s", err, field)
		}
		for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
			if c.Field == field && strings.Contains(c.Message, "written only by the machine-controller") {
				return
			}
		}
		t.Fatalf("no cause on %s in %v", field, err)
	}

	t.Run("create with a providerID", func(t *testing.T) {
		m := forged("with-id")
		m.Spec.ProviderID = ptr("openstack:///the-control-plane")
		wantForbidden(t, env.Client.Create(ctx, m, client.DryRunAll), "spec.providerID")
		if err := ctrl.Create(ctx, m, client.DryRunAll); err != nil {
			t.Fatalf("the controller was refused: %v", err)
		}
	})
	t.Run("create with a provider state", func(t *testing.T) {
		m := forged("with-state")
		m.Annotations = map[string]string{state: `{"serverID":"someone-elses"}`}
		wantForbidden(t, env.Client.Create(ctx, m, client.DryRunAll), "metadata.annotations["+state+"]")
	})
	// The controller's record of the Node it linked (deletion drains and deletes only that
	// Node) is a state annotation too: a user who writes it cannot point the Machine at a
	// control plane's Node.
	const link = "machine" + cloud.StateAnnotationSuffix
	t.Run("create with a node link", func(t *testing.T) {
		m := forged("with-link")
		m.Annotations = map[string]string{link: `{"nodeName":"cp-1","nodeUID":"someone-elses"}`}
		wantForbidden(t, env.Client.Create(ctx, m, client.DryRunAll), "metadata.annotations["+link+"]")
		if err := ctrl.Create(ctx, m, client.DryRunAll); err != nil {
			t.Fatalf("the controller was refused: %v", err)
		}
	})
	m := forged("updated")
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name   string
		change func(*v1alpha1.Machine)
		field  string
	}{
		{"set a providerID", func(m *v1alpha1.Machine) { m.Spec.ProviderID = ptr("openstack:///the-control-plane") }, "spec.providerID"},
		{"set a provider state", func(m *v1alpha1.Machine) { m.Annotations = map[string]string{state: `{"serverID":"x"}`} }, "metadata.annotations[" + state + "]"},
		{"set a node link", func(m *v1alpha1.Machine) {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[link] = `{"nodeName":"cp-1","nodeUID":"x"}`
		}, "metadata.annotations[" + link + "]"},
	} {
		t.Run("update: "+s.name, func(t *testing.T) {
			if !env.Get(t, m) {
				t.Fatal("machine gone")
			}
			s.change(m)
			wantForbidden(t, env.Client.Update(ctx, m), s.field)
			if !env.Get(t, m) {
				t.Fatal("machine gone")
			}
			s.change(m)
			if err := ctrl.Update(ctx, m); err != nil {
				t.Fatalf("the controller was refused: %v", err)
			}
		})
	}
	t.Run("update: change the controller's values", func(t *testing.T) {
		if !env.Get(t, m) {
			t.Fatal("machine gone")
		}
		m.Spec.ProviderID = ptr("openstack:///another")
		wantForbidden(t, env.Client.Update(ctx, m), "spec.providerID")
	})
	t.Run("update: other annotations stay the user's", func(t *testing.T) {
		if !env.Get(t, m) {
			t.Fatal("machine gone")
		}
		m.Annotations[v1alpha1.MaintenanceAnnotation] = "true"
		if err := env.Client.Update(ctx, m); err != nil {
			t.Fatalf("update = %v", err)
		}
	})
}
