package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/controller/machine"
	"github.com/slipway-dev/slipway/test/envtest"
)

// bootstrapAllowed is everything a bootstrap token of the machine-controller's may do on top of
// what Kubernetes grants every authenticated user, as TestRBACAllowList writes it. In a kubeadm
// cluster kubeadm's own bindings for system:bootstrappers:kubeadm:default-node-token add CSR
// creation and the kubeadm and kubelet ConfigMaps; none of them reads a Secret.
var bootstrapAllowed = map[string][]string{
	"*": {"authentication.k8s.io/selfsubjectreviews create", "authorization.k8s.io/selfsubjectaccessreviews create",
		"authorization.k8s.io/selfsubjectrulesreviews create"},
	"kube-system": {"/secrets/" + bootstrap.CredentialsSecret + " get"},
}

// TestNodeCredentialsRBAC authenticates with real bootstrap tokens (the API server's bootstrap
// token authenticator, as kubeadm runs it) and shows that a token in the groups the
// machine-controller gives its tokens may read the one Secret of node credentials, by name, and nothing else: no other
// Secret, not its own token, no list or watch, not the same name in another namespace. A token
// as kubeadm makes them (without the group) may not read it.
func TestNodeCredentialsRBAC(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	admin := env.Kube.CoreV1().Secrets(bootstrap.CredentialsNamespace)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CredentialsSecret, Namespace: bootstrap.CredentialsNamespace},
		Data: map[string][]byte{"proxy.env": []byte("HTTP_PROXY=http://user:secret@proxy.example.com:3128\n")}}
	if _, err := admin.Create(ctx, creds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), creds.Name, metav1.DeleteOptions{}) })
	other := env.Namespace(t)
	if _, err := env.Kube.CoreV1().Secrets(other).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CredentialsSecret}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	pool := bootstrapToken(t, env, "poolaa", machine.TokenGroups, time.Hour)
	kube := tokenClient(t, env, pool)
	secrets := kube.CoreV1().Secrets(bootstrap.CredentialsNamespace)
	// The authenticator reads token Secrets through an informer: a new one counts a moment later.
	envtest.Eventually(t, time.Minute, "the token accepted", func() (bool, string) {
		_, err := secrets.Get(ctx, bootstrap.CredentialsSecret, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	got, err := secrets.Get(ctx, bootstrap.CredentialsSecret, metav1.GetOptions{})
	if err != nil || string(got.Data["proxy.env"]) != string(creds.Data["proxy.env"]) {
		t.Fatalf("reading the node credentials with the token: %v, %q", err, got.Data)
	}
	for what, err := range map[string]error{
		"the node settings":         get(ctx, secrets, bootstrap.SettingsSecret),
		"its own token":             get(ctx, secrets, "bootstrap-token-"+strings.SplitN(pool, ".", 2)[0]),
		"the same name in " + other: get(ctx, kube.CoreV1().Secrets(other), bootstrap.CredentialsSecret),
		"the Secrets' list":         listErr(secrets.List(ctx, metav1.ListOptions{})),
		"a watch of the one Secret": watchErr(secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + bootstrap.CredentialsSecret})),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("the token reading %s: %v, want Forbidden", what, err)
		}
	}
	for _, ns := range []string{"kube-system", "kube-public", other} {
		t.Run(ns, func(t *testing.T) {
			got, _ := rules(t, kube, ns)
			want := append(slices.Clone(bootstrapAllowed["*"]), bootstrapAllowed[ns]...)
			for _, s := range sortedKeys(got) {
				if !slices.Contains(want, s) {
					t.Errorf("a pool machine's bootstrap token may %q in %s, beyond the allow-list", s, ns)
				}
			}
			for _, s := range want {
				if !got[s] {
					t.Errorf("a pool machine's bootstrap token may not %q in %s", s, ns)
				}
			}
		})
	}

	kubeadmToken := tokenClient(t, env, bootstrapToken(t, env, "kubeaa", "system:bootstrappers:kubeadm:default-node-token", time.Hour))
	envtest.Eventually(t, time.Minute, "kubeadm's token refused the node credentials", func() (bool, string) {
		err := get(ctx, kubeadmToken.CoreV1().Secrets(bootstrap.CredentialsNamespace), bootstrap.CredentialsSecret)
		return apierrors.IsForbidden(err), fmt.Sprint(err)
	})
}

// bootstrapToken creates a bootstrap token Secret as an admin and returns the token.
func bootstrapToken(t *testing.T, env *envtest.Env, id, groups string, ttl time.Duration) string {
	t.Helper()
	const secret = "0123456789abcdef"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type: corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true",
			"auth-extra-groups": groups, "expiration": time.Now().Add(ttl).UTC().Format(time.RFC3339)}}
	secrets := env.Kube.CoreV1().Secrets("kube-system")
	if _, err := secrets.Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secrets.Delete(context.Background(), s.Name, metav1.DeleteOptions{}) })
	return id + "." + secret
}

// tokenClient is a client that authenticates with token alone.
func tokenClient(t *testing.T, env *envtest.Env, token string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: env.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type getter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
}

func get(ctx context.Context, s getter, name string) error {
	_, err := s.Get(ctx, name, metav1.GetOptions{})
	return err
}

func listErr(_ *corev1.SecretList, err error) error { return err }

func watchErr(w interface{ Stop() }, err error) error {
	if err == nil {
		w.Stop()
	}
	return err
}
