package controller_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/cloud/cloudtest"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestOperations checks what an operator relies on: /healthz and /readyz answer, the Prometheus
// endpoint serves the controller's metrics to a client the API server authorizes for them (and
// to no one else), and the leader holds the Lease in kube-system.
func TestOperations(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	metrics, probes := freeAddr(t), freeAddr(t)
	id := "machine-controller"
	env.StartManager(t, cloudtest.New(), envtest.TestOptions(ns), controller.ManagerOptions{
		MetricsAddr: metrics, ProbeAddr: probes, LeaderElection: true, LeaderElectionNamespace: "kube-system", LeaderElectionID: id})
	reader, stranger := metricsTokens(t, env, ns)
	// The metrics server's certificate is self-signed; what is under test is who gets an answer.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(url, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := insecure.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		envtest.Eventually(t, time.Minute, path, func() (bool, string) {
			code, body := get("http://"+probes+path, "")
			return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
		})
	}
	envtest.Eventually(t, time.Minute, "machine metrics", func() (bool, string) {
		code, body := get("https://"+metrics+"/metrics", reader)
		for _, want := range []string{"machine_controller_machines{phase=\"Running\"}", "controller_runtime_reconcile_total"} {
			if !strings.Contains(body, want) {
				return false, fmt.Sprintf("%d: missing %s", code, want)
			}
		}
		return true, ""
	})
	// Nobody but the reader gets the metrics.
	for _, c := range []struct {
		who, token string
		want       []int
	}{{"no token", "", []int{http.StatusUnauthorized}},
		{"a forged token", "not-a-token", []int{http.StatusUnauthorized}},
		{"a user without the metrics-reader role", stranger, []int{http.StatusForbidden}}} {
		if code, body := get("https://"+metrics+"/metrics", c.token); !slices.Contains(c.want, code) {
			t.Errorf("metrics for %s: %d %.200s, want %v", c.who, code, body, c.want)
		}
	}
	if code, body := get("http://"+metrics+"/metrics", reader); code == http.StatusOK {
		t.Errorf("metrics answered over plain http: %.200s", body)
	}
	envtest.Eventually(t, time.Minute, "the leader Lease", func() (bool, string) {
		lease := &coordinationv1.Lease{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: id}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil, fmt.Sprint(err)
	})
}

// metricsTokens returns the tokens of two service accounts in ns: one bound to the
// machine-controller-metrics-reader ClusterRole that manifests/ ships, one bound to nothing.
func metricsTokens(t *testing.T, env *envtest.Env, ns string) (reader, stranger string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Apply(ctx, filepath.Join(env.Root, "manifests", "machine-controller", "metrics-reader.yaml")); err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := env.Client.Create(ctx, sa); err != nil {
			t.Fatal(err)
		}
		tr, err := env.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("requesting a token for %s: %v", name, err)
		}
		return tr.Status.Token
	}
	reader, stranger = token("prometheus"), token("someone")
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "machine-controller-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "prometheus"}}}
	if err := env.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })
	return reader, stranger
}
