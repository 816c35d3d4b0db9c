package integration_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

const cloudSpec = "spec.providerSpec.value.cloudProviderSpec."

// TestAttackEndpointRedirection: a Machine that names its own Keystone, to receive the
// controller's password, and the user-data with a fresh bootstrap token that a create would
// send. Admission refuses it, naming the field, in a Machine and in a MachineDeployment's
// template; with admission out of the way the controller fails the Machine, and the attacker's
// endpoint receives nothing at all: no password, no user-data, and no bootstrap token is minted.
func TestAttackEndpointRedirection(t *testing.T) {
	a := newAttack(t, nil)
	attacker := openstacktest.NewRecorder()
	t.Cleanup(attacker.Close)
	spec := map[string]any{"identityEndpoint": attacker.URL + "/v3"}

	a.refused(a.mallory.Create(a.ctx, a.machine("redirect", spec)), cloudSpec+"identityEndpoint", "come only from the machine-controller's configuration")
	md := deployment(t, a.ns, a.cloud, 1, 1)
	md.Spec.Template.Spec = a.machine("", spec).Spec
	a.refused(a.mallory.Create(a.ctx, md), "spec.template."+cloudSpec+"identityEndpoint", "come only from")

	m := a.machine("redirect", spec)
	a.bypass(m)
	a.failed(m, v1alpha1.InvalidConfigurationMachineError, "identityEndpoint: Forbidden")
	if reqs := attacker.Requests(); len(reqs) > 0 {
		t.Fatalf("the attacker's endpoint received %d requests: %q", len(reqs), reqs)
	}
	if n := a.tokensOf(m); n != 0 {
		t.Fatalf("%d bootstrap tokens were made for the Machine", n)
	}
	if n := len(a.cloud.sim.Servers()); n != 0 {
		t.Fatalf("the cloud got %d servers", n)
	}
	a.nowhere(m, openstacktest.Password)
	a.deleted(m)
}

// TestAttackForeignSecret: a Machine that references a Secret it may not read (the controller's
// own in kube-system, or one in its namespace that nobody labelled for the controller) to get
// its value back in the Machine's status, or sent where it chooses. Admission refuses a Secret
// for anything but a credential, and references into another namespace. With admission out of
// the way, and even with an operator who lets Machines bring their own credentials and granted
// the controller read access in the namespace, the controller reads only labelled Secrets of the
// Machine's namespace, and no value shows in status or events.
func TestAttackForeignSecret(t *testing.T) {
	attacker := openstacktest.NewRecorder()
	t.Cleanup(attacker.Close)
	a := newAttack(t, func(o *openstack.Options) {
		o.Policy.AllowMachineCloud = true
		o.Resolver = openstack.ClientResolver{Reader: controllerReader(t)}
	})
	// The operator lets the controller read Secrets in the namespace (SECURITY.md).
	a.grantSecrets()
	a.secret(a.ns, "theirs", "value-of-a-secret-nobody-labelled", false)
	a.secret(a.ns, "labelled", "value-the-team-labelled", true)
	a.secret("kube-system", "elsewhere-"+a.ns, "value-in-kube-system", true)
	ref := func(ns, name string) map[string]any {
		r := map[string]any{"name": name, "key": "password"}
		if ns != "" {
			r["namespace"] = ns
		}
		return map[string]any{"secretKeyRef": r}
	}
	own := func(password any) map[string]any {
		return map[string]any{"identityEndpoint": attacker.URL + "/v3", "username": "mallory", "domainName": "Default",
			"projectName": "demo", "password": password}
	}

	a.refused(a.mallory.Create(a.ctx, a.machine("flavor", map[string]any{"flavor": ref("", "theirs")})),
		cloudSpec+"flavor.secretKeyRef", "only credential fields")
	a.refused(a.mallory.Create(a.ctx, a.machine("elsewhere", map[string]any{"flavor": map[string]any{
		"configMapKeyRef": map[string]any{"namespace": "kube-system", "name": "cluster-info", "key": "kubeconfig"}}})),
		cloudSpec+"flavor.configMapKeyRef.namespace", "the Machine's own namespace")
	a.refused(a.mallory.Create(a.ctx, a.machine("password", own(ref("", "theirs")))), cloudSpec+"password", "Forbidden")

	for _, c := range []struct {
		name, why string
		spec      map[string]any
	}{
		{"other-namespace", "references resolve only in the Machine's own namespace", own(ref("kube-system", "elsewhere-"+a.ns))},
		{"not-labelled", "is not labelled " + cloud.ReferenceLabel + "=true", own(ref("", "theirs"))},
		{"no-credential", "only credential fields", map[string]any{"image": ref("", "labelled")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := a.machine(c.name, c.spec)
			a.bypass(m)
			envtestWaitValidated(a, m, c.why)
			a.nowhere(m, "value-of-a-secret-nobody-labelled", "value-in-kube-system", "value-the-team-labelled")
			a.deleted(m)
		})
	}
	for _, r := range attacker.Requests() {
		if strings.Contains(r, "value-") {
			t.Fatalf("a Secret's value reached the attacker's endpoint: %q", r)
		}
	}
	// The positive control: a labelled Secret of the Machine's namespace is read, and goes to
	// the endpoint the Machine chose, which the operator allowed.
	m := a.machine("labelled", own(ref("", "labelled")))
	a.bypass(m)
	envtestWaitValidated(a, m, "rejected the credentials")
	a.nowhere(m, "value-the-team-labelled")
	if reqs := attacker.Requests(); len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1], "value-the-team-labelled") {
		t.Fatalf("the labelled Secret was not used: %q", reqs)
	}
	a.deleted(m)
}

// envtestWaitValidated waits until m's Validated condition is False with a message containing why.
func envtestWaitValidated(a *attack, m *v1alpha1.Machine, why string) {
	a.t.Helper()
	waitCondition(a, m, v1alpha1.MachineValidated, why)
}

// secret creates a Secret with key password, labelled for the controller or not.
func (a *attack) secret(ns, name, value string, labelled bool) {
	a.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"password": value}}
	if labelled {
		s.Labels = map[string]string{cloud.ReferenceLabel: "true"}
	}
	if err := a.env.Client.Create(a.ctx, s); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { _ = a.env.Client.Delete(a.ctx, s) })
}

// grantSecrets lets the controller's service account read Secrets in the attack's namespace,
// as an operator who wants Machines there to reference Secrets would.
func (a *attack) grantSecrets() {
	a.t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: "machine-controller-references"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "machine-controller"}}}
	if err := a.env.Client.Create(a.ctx, role); err != nil {
		a.t.Fatal(err)
	}
	if err := a.env.Client.Create(a.ctx, binding); err != nil {
		a.t.Fatal(err)
	}
}

// TestAttackBootstrapTokenExfiltration: a Machine that points at a working cloud of its
// author's, with valid credentials there, so that the controller would create the server there
// and hand it the user-data with a fresh bootstrap token. With admission out of the way the
// controller still refuses: that cloud receives not a single call, and no token is minted.
func TestAttackBootstrapTokenExfiltration(t *testing.T) {
	a := newAttack(t, nil)
	theirs := openstacktest.NewTLS(openstacktest.Options{})
	t.Cleanup(theirs.Close)
	m := a.machine("exfiltrate", map[string]any{"identityEndpoint": theirs.AuthURL(), "username": openstacktest.Username,
		"password": openstacktest.Password, "domainName": openstacktest.DomainName, "projectName": openstacktest.ProjectName})
	a.refused(a.mallory.Create(a.ctx, m.DeepCopy()), cloudSpec+"identityEndpoint", "come only from")
	a.bypass(m)
	a.failed(m, v1alpha1.InvalidConfigurationMachineError, "identityEndpoint: Forbidden")
	if calls := theirs.Calls(); calls.Total != 0 || len(theirs.Servers()) != 0 {
		t.Fatalf("the author's cloud got %d calls and %d servers", calls.Total, len(theirs.Servers()))
	}
	if n := a.tokensOf(m); n != 0 {
		t.Fatalf("%d bootstrap tokens were made for the Machine", n)
	}
	a.deleted(m)
	if n := len(a.cloud.sim.Servers()); n != 0 {
		t.Fatalf("the operator's cloud got %d servers", n)
	}
}
