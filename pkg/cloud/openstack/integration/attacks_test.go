package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// The attack tests of issue 23. Each plays someone who may create Machines, MachineSets and
// MachineDeployments in their own namespace (and nothing else) against the real API server,
// the admission webhook and the controller on the simulated cloud: first through admission,
// which must refuse, then with admission out of the way (as if it were removed or failing open),
// where the controller itself must refuse or the attack must come to nothing.

// attack is one attack test's namespace, cloud, controller and attacker.
type attack struct {
	t     *testing.T
	env   *envtest.Env
	ns    string
	cloud *simCloud
	// mallory may write the cluster.k8s.io objects of ns, as a team member would.
	mallory client.Client
	ctx     context.Context
}

func newAttack(t *testing.T, tune func(*openstack.Options)) *attack {
	env := envtest.Get(t)
	a := &attack{t: t, env: env, ns: env.Namespace(t), ctx: context.Background()}
	a.cloud = newSimCloud(t, cloudOptions{buildTime: 100 * time.Millisecond})
	if tune != nil {
		a.cloud.Provider = a.cloud.with(t, tune)
	}
	env.StartKubelet(t, a.ns, a.cloud.observer)
	opts := envtest.TestOptions(a.ns)
	opts.ClusterName = clusterName
	env.StartManager(t, a.cloud, opts, controller.ManagerOptions{})
	a.mallory = a.user("mallory", []rbacv1.PolicyRule{{APIGroups: []string{"cluster.k8s.io"},
		Resources: []string{"machines", "machinesets", "machinedeployments"}, Verbs: []string{"*"}}})
	return a
}

// user returns a client for a user who may do rules in the attack's namespace.
func (a *attack) user(name string, rules []rbacv1.PolicyRule) client.Client {
	a.t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name}, Rules: rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: name}}}
	for _, o := range []client.Object{role, binding} {
		if err := a.env.Client.Create(a.ctx, o); err != nil {
			a.t.Fatal(err)
		}
	}
	cfg, err := a.env.User(name)
	if err != nil {
		a.t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: a.env.Client.Scheme()})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

// machine is a Machine in the attack's namespace whose cloudProviderSpec is the scenarios' one
// with extra merged in.
func (a *attack) machine(name string, extra map[string]any) *v1alpha1.Machine {
	a.t.Helper()
	var cps map[string]any
	if err := json.Unmarshal(a.cloud.spec, &cps); err != nil {
		a.t.Fatal(err)
	}
	for k, v := range extra {
		cps[k] = v
	}
	raw, err := json.Marshal(map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": cps, "operatingSystem": "ubuntu"})
	if err != nil {
		a.t.Fatal(err)
	}
	return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.ns},
		Spec: v1alpha1.MachineSpec{ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}},
			Versions: v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"}}}
}

// refused fails unless err is admission's 422 with a cause on field that says why.
func (a *attack) refused(err error, field, why string) {
	a.t.Helper()
	if !apierrors.IsInvalid(err) {
		a.t.Fatalf("got %v, want 422 Invalid on %s", err, field)
	}
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		if c.Field == field && strings.Contains(c.Message, why) {
			return
		}
	}
	a.t.Fatalf("no cause on %s saying %q in %v", field, why, err)
}

// bypass creates obj with admission out of the way.
func (a *attack) bypass(obj client.Object) {
	a.t.Helper()
	a.env.WithoutAdmission(a.t, func() {
		if err := a.env.Client.Create(a.ctx, obj); err != nil {
			a.t.Fatal(err)
		}
	})
}

// failed waits until the controller failed the Machine with reason, and returns it.
func (a *attack) failed(m *v1alpha1.Machine, reason v1alpha1.MachineStatusError, message string) *v1alpha1.Machine {
	a.t.Helper()
	envtest.Eventually(a.t, wait, "machine "+m.Name+" failed", func() (bool, string) {
		if !a.env.Get(a.t, m) {
			return false, "gone"
		}
		if m.Status.ErrorReason == nil || m.Status.ErrorMessage == nil {
			return false, fmt.Sprintf("phase %s", m.Status.Phase)
		}
		return *m.Status.ErrorReason == reason && strings.Contains(*m.Status.ErrorMessage, message), *m.Status.ErrorMessage
	})
	return m
}

// deleted deletes m and waits until the controller has released it.
func (a *attack) deleted(m *v1alpha1.Machine) {
	a.t.Helper()
	if err := a.env.Client.Delete(a.ctx, m); client.IgnoreNotFound(err) != nil {
		a.t.Fatal(err)
	}
	envtest.Eventually(a.t, wait, "machine "+m.Name+" released", func() (bool, string) {
		return !a.env.Get(a.t, m.DeepCopy()), "still there"
	})
}

// nowhere fails if any of secrets shows in m's status or in an event of the namespace.
func (a *attack) nowhere(m *v1alpha1.Machine, secrets ...string) {
	a.t.Helper()
	status, _ := json.Marshal(m.Status)
	var events corev1.EventList
	if err := a.env.Client.List(a.ctx, &events, client.InNamespace(a.ns)); err != nil {
		a.t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(status), s) {
			a.t.Fatalf("machine %s's status shows a secret: %s", m.Name, status)
		}
		for _, e := range events.Items {
			if strings.Contains(e.Message, s) {
				a.t.Fatalf("event %s shows a secret: %s", e.Name, e.Message)
			}
		}
	}
}

// with returns a provider for the same cloud and cluster as c's, with tune applied to its options.
func (c *simCloud) with(t testing.TB, tune func(*openstack.Options)) *openstack.Provider {
	t.Helper()
	env := simEnv(c.sim)
	opts := openstack.Options{ClusterUID: c.clusterUID, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		QPS: 500, Burst: 1000, RetryBackoff: 50 * time.Millisecond, ErrorBackoff: 200 * time.Millisecond}
	tune(&opts)
	p, err := openstack.New(clusterName, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tokensOf counts the bootstrap token Secrets made for a Machine.
func (a *attack) tokensOf(m *v1alpha1.Machine) int {
	var list corev1.SecretList
	if err := a.env.Client.List(a.ctx, &list, client.InNamespace("kube-system"),
		client.MatchingLabels{"cluster.k8s.io/machine-uid": string(m.UID)}); err != nil {
		a.t.Fatal(err)
	}
	return len(list.Items)
}

// controllerReader is an uncached client that authenticates as the machine-controller, as the
// one its provider resolves references with.
func controllerReader(t *testing.T) client.Reader {
	t.Helper()
	env := envtest.Get(t)
	c, err := client.New(env.ControllerConfig, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitCondition waits until m's condition typ is False with a message containing why.
func waitCondition(a *attack, m *v1alpha1.Machine, typ, why string) {
	a.t.Helper()
	envtest.Eventually(a.t, wait, fmt.Sprintf("machine %s %s false: %s", m.Name, typ, why), func() (bool, string) {
		if !a.env.Get(a.t, m) {
			return false, "gone"
		}
		for _, c := range m.Status.Conditions {
			if c.Type == typ {
				return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, why), c.Message
			}
		}
		return false, "no condition " + typ
	})
}
