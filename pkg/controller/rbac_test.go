package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/controller/machine"
	"github.com/slipway-dev/slipway/test/envtest"
)

// allowed is everything the machine-controller's service account may do, as
// "namespace group/resource[/name] verb" (namespace * for the cluster-wide rules, which apply in
// every namespace and to cluster-scoped resources). SECURITY.md explains every entry. The test
// fails on anything granted beyond this list, and on anything listed but not granted, so the
// list, the markers and manifests/machine-controller/role.yaml cannot drift apart.
var allowed = map[string][]string{
	"*": {
		// Machines, MachineSets, MachineDeployments: the controllers' own objects.
		"cluster.k8s.io/machines create", "cluster.k8s.io/machines delete", "cluster.k8s.io/machines get",
		"cluster.k8s.io/machines list", "cluster.k8s.io/machines patch", "cluster.k8s.io/machines update",
		"cluster.k8s.io/machines watch", "cluster.k8s.io/machines/status patch", "cluster.k8s.io/machines/finalizers update",
		"cluster.k8s.io/machinesets create", "cluster.k8s.io/machinesets delete", "cluster.k8s.io/machinesets get",
		"cluster.k8s.io/machinesets list", "cluster.k8s.io/machinesets update", "cluster.k8s.io/machinesets watch",
		"cluster.k8s.io/machinesets/status patch", "cluster.k8s.io/machinesets/finalizers update",
		"cluster.k8s.io/machinedeployments get", "cluster.k8s.io/machinedeployments list", "cluster.k8s.io/machinedeployments watch", "cluster.k8s.io/machinedeployments patch",
		"cluster.k8s.io/machinedeployments/status patch", "cluster.k8s.io/machinedeployments/finalizers update",
		// Nodes: follow, label and taint, cordon, delete a Machine's Node; drain it.
		"/nodes get", "/nodes list", "/nodes watch", "/nodes patch", "/nodes delete",
		"/pods list", "/pods/eviction create",
		"/events create", "/events patch",
		// kubelet serving certificates of the Machines' Nodes.
		"certificates.k8s.io/certificatesigningrequests get", "certificates.k8s.io/certificatesigningrequests list",
		"certificates.k8s.io/certificatesigningrequests watch", "certificates.k8s.io/certificatesigningrequests/approval update",
		"certificates.k8s.io/signers/kubernetes.io/kubelet-serving approve",
		// The cluster UID.
		"/namespaces/kube-system get",
		// Its own webhook configurations' caBundle, on certificate renewal.
		"admissionregistration.k8s.io/mutatingwebhookconfigurations/machine-controller get",
		"admissionregistration.k8s.io/mutatingwebhookconfigurations/machine-controller update",
		"admissionregistration.k8s.io/validatingwebhookconfigurations/machine-controller get",
		"admissionregistration.k8s.io/validatingwebhookconfigurations/machine-controller update",
		// Metrics behind authentication and authorization.
		"authentication.k8s.io/tokenreviews create", "authorization.k8s.io/subjectaccessreviews create",
		// What Kubernetes grants every authenticated user (system:basic-user).
		"authentication.k8s.io/selfsubjectreviews create", "authorization.k8s.io/selfsubjectaccessreviews create",
		"authorization.k8s.io/selfsubjectrulesreviews create",
	},
	"kube-system": {
		// Bootstrap tokens, one per joining Machine: created, and deleted by the name and UID the
		// Machine records. No Secret is read but its own, by name.
		"/secrets create", "/secrets delete",
		"/secrets/machine-controller-node-settings get",
		"/secrets/machine-controller-webhook-tls get", "/secrets/machine-controller-webhook-tls update",
		"/configmaps create",
		"/configmaps/machine-controller-leftovers get", "/configmaps/machine-controller-leftovers update",
		"coordination.k8s.io/leases create",
		"coordination.k8s.io/leases/machine-controller get", "coordination.k8s.io/leases/machine-controller update",
	},
	"kube-public": {"/configmaps/cluster-info get"},
}

// everyone are the non-resource URLs Kubernetes lets every (service account) user GET:
// discovery, health and the service account issuer's documents.
var everyone = []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/api", "/api/*",
	"/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/openid/v1/jwks", "/openid/v1/jwks/", "/readyz",
	"/version", "/version/"}

// TestRBACAllowList asks the API server what the machine-controller's service account, bound
// by manifests/machine-controller as apply installs it, may do in kube-system, kube-public and
// an ordinary namespace (SelfSubjectRulesReview), and compares it with the allow-list.
func TestRBACAllowList(t *testing.T) {
	env := envtest.Get(t)
	kube, err := kubernetes.NewForConfig(env.ControllerConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"kube-system", "kube-public", env.Namespace(t)} {
		t.Run(ns, func(t *testing.T) {
			got, nonResource := rules(t, kube, ns)
			want := map[string]bool{}
			for _, s := range append(slices.Clone(allowed["*"]), allowed[ns]...) {
				want[s] = true
			}
			for _, s := range sortedKeys(got) {
				if !want[s] {
					t.Errorf("the service account may %q in %s, which the allow-list does not grant", s, ns)
				}
			}
			for _, s := range sortedKeys(want) {
				if !got[s] {
					t.Errorf("the allow-list grants %q in %s, which the RBAC does not: update the list", s, ns)
				}
			}
			for _, rule := range nonResource {
				for _, u := range rule.NonResourceURLs {
					if !slices.Equal(rule.Verbs, []string{"get"}) || !slices.Contains(everyone, u) {
						t.Errorf("the service account may %v %s, which only Kubernetes' defaults should grant", rule.Verbs, u)
					}
				}
			}
		})
	}
}

// rules asks the API server what kube's user may do in ns (SelfSubjectRulesReview): its
// resource rules as "group/resource[/name] verb", and its non-resource rules.
func rules(t *testing.T, kube kubernetes.Interface, ns string) (map[string]bool, []authorizationv1.NonResourceRule) {
	t.Helper()
	r, err := kube.AuthorizationV1().SelfSubjectRulesReviews().Create(context.Background(),
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Incomplete {
		t.Fatalf("the review is incomplete: %s", r.Status.EvaluationError)
	}
	got := map[string]bool{}
	for _, rule := range r.Status.ResourceRules {
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, n := range names {
					for _, v := range rule.Verbs {
						got[strings.TrimSuffix(g+"/"+res+"/"+n, "/")+" "+v] = true
					}
				}
			}
		}
	}
	return got, r.Status.NonResourceRules
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSecretsPolicy: RBAC lets the service account create and delete any Secret in
// kube-system, since bootstrap tokens have names made per Machine; the admission policy of
// manifests/machine-controller/secrets-policy.yaml narrows that to bootstrap token Secrets
// labelled with a Machine's UID. The service account can neither delete the cluster's other
// Secrets (here the node settings) nor create one of another kind or with other groups than the
// controller gives its tokens, nor read a bootstrap token it made; it can create and delete its
// own.
func TestSecretsPolicy(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	kube, err := kubernetes.NewForConfig(env.ControllerConfig)
	if err != nil {
		t.Fatal(err)
	}
	secrets := kube.CoreV1().Secrets("kube-system")
	const why = "the machine-controller may"
	// The API server loads a new policy within seconds; until then RBAC alone answers.
	envtest.Eventually(t, time.Minute, "the policy refusing to delete the node settings", func() (bool, string) {
		err := secrets.Delete(ctx, bootstrap.SettingsSecret, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && apierrors.IsInvalid(err) && strings.Contains(err.Error(), why), fmt.Sprint(err)
	})
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type: corev1.SecretTypeOpaque}
	if _, err := secrets.Create(ctx, planted, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), why) {
		t.Fatalf("creating an Opaque Secret: %v, want the policy's refusal", err)
	}
	unlabelled := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type: corev1.SecretTypeBootstrapToken, StringData: map[string]string{"token-id": "abcdef", "token-secret": "0123456789abcdef"}}
	if _, err := secrets.Create(ctx, unlabelled, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), why) {
		t.Fatalf("creating an unlabelled bootstrap token: %v, want the policy's refusal", err)
	}
	own := unlabelled.DeepCopy()
	own.Labels = map[string]string{"cluster.k8s.io/machine-uid": "3f1c2a9e-0000-4000-8000-000000000001"}
	for _, groups := range []string{"", "system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:operators-wide-group"} {
		other := own.DeepCopy()
		if groups != "" {
			other.StringData["auth-extra-groups"] = groups
		}
		if _, err := secrets.Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "bootstrap tokens carry the groups") {
			t.Fatalf("creating a labelled bootstrap token with groups %q: %v, want the policy's refusal", groups, err)
		}
	}
	own.StringData["auth-extra-groups"] = machine.TokenGroups
	made, err := secrets.Create(ctx, own, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Machine's bootstrap token: %v", err)
	}
	if _, err := secrets.Get(ctx, made.Name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("reading a bootstrap token back: %v, want Forbidden", err)
	}
	if err := secrets.Delete(ctx, made.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &made.UID}}); err != nil {
		t.Fatalf("deleting a Machine's bootstrap token: %v", err)
	}
}
