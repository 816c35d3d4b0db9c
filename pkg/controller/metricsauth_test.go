package controller_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// reviewCounter counts the TokenReviews and SubjectAccessReviews a filter sends.
type reviewCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *reviewCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	for _, kind := range []string{"tokenreviews", "subjectaccessreviews"} {
		if strings.HasSuffix(r.URL.Path, "/"+kind) {
			c.n[kind]++
		}
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

func (c *reviewCounter) take() (tokens, access int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tokens, access = c.n["tokenreviews"], c.n["subjectaccessreviews"]
	clear(c.n)
	return tokens, access
}

// TestMetricsAuth checks the metrics filter against a real API server: who gets the metrics,
// which method is checked, that a scraper's repeated requests reuse the API server's answer, and
// that a revoked binding takes effect once that answer is a minute old.
func TestMetricsAuth(t *testing.T) {
	env := envtest.Get(t)
	ns := env.Namespace(t)
	reader, stranger := metricsTokens(t, env, ns)

	hc, err := rest.HTTPClientFor(env.ControllerConfig)
	if err != nil {
		t.Fatal(err)
	}
	counter := &reviewCounter{next: hc.Transport, n: map[string]int{}}
	hc.Transport = counter
	now := time.Now()
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }

	filter, err := controller.NewMetricsFilter(env.ControllerConfig, hc, clock)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	ask := func(method, auth string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		what, method, auth          string
		want, wantTokens, wantAcces int
	}{
		{"no Authorization header", http.MethodGet, "", http.StatusUnauthorized, 0, 0},
		{"a Basic header", http.MethodGet, "Basic dXNlcjpwYXNz", http.StatusUnauthorized, 0, 0},
		{"a token the API server does not know", http.MethodGet, "Bearer not-a-token", http.StatusUnauthorized, 1, 0},
		{"the reader", http.MethodGet, "Bearer " + reader, http.StatusOK, 1, 1},
		{"the reader again: the answer is reused", http.MethodGet, "bearer " + reader, http.StatusOK, 0, 0},
		{"the reader with HEAD, the same check as GET: reused", http.MethodHead, "Bearer " + reader, http.StatusOK, 0, 0},
		{"the reader with POST, which the role does not grant", http.MethodPost, "Bearer " + reader, http.StatusForbidden, 1, 1},
		{"a service account without the role", http.MethodGet, "Bearer " + stranger, http.StatusForbidden, 1, 1},
		{"the same again: the denial is reused", http.MethodGet, "Bearer " + stranger, http.StatusForbidden, 0, 0},
	} {
		got := ask(c.method, c.auth)
		tokens, access := counter.take()
		if got != c.want || tokens != c.wantTokens || access != c.wantAcces {
			t.Errorf("%s: %d after %d TokenReviews and %d SubjectAccessReviews, want %d after %d and %d",
				c.what, got, tokens, access, c.want, c.wantTokens, c.wantAcces)
		}
	}

	// Revoke the reader's binding; the API server's own authorizer sees it within moments.
	ctx := context.Background()
	if err := env.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, "metrics-"+ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	envtest.Eventually(t, time.Minute, "the API server denies the reader", func() (bool, string) {
		sar, err := env.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:" + ns + ":prometheus",
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return !sar.Status.Allowed, sar.Status.Reason
	})
	if got := ask(http.MethodGet, "Bearer "+reader); got != http.StatusOK {
		t.Errorf("the reader within a minute of the last check: %d, want the remembered 200", got)
	}
	advance(time.Minute + time.Second)
	if got := ask(http.MethodGet, "Bearer "+reader); got != http.StatusForbidden {
		t.Errorf("the reader a minute after its binding went: %d, want 403", got)
	}
}
