package controller

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a decision about a token is reused. A scraper asks every 15–60 s with the same
// token: it costs the API server a TokenReview and a SubjectAccessReview about once a minute,
// not on every scrape. A revoked binding takes effect within allowTTL.
const (
	allowTTL = time.Minute
	denyTTL  = 10 * time.Second
	// maxDecisions bounds the cache: beyond it, expired decisions are dropped, and if that is
	// not enough, all of them (a flood of made-up tokens must not grow the process).
	maxDecisions = 1024
)

// metricsAuth authenticates a request's bearer token with a TokenReview and authorizes the
// request (its lower-cased method on its path, as the API server names non-resource requests)
// with a SubjectAccessReview, as the API server itself would for GET /metrics.
//
// controller-runtime's filters.WithAuthenticationAndAuthorization does the same through
// k8s.io/apiserver's delegating authenticator and authorizer, which bring the API server's
// dependency tree (CEL, gRPC, OpenTelemetry) into the binary: about 10 MB of the stripped
// machine-controller for two API calls (test/bench/controller.md, binary size).
type metricsAuth struct {
	tokens  authenticationclient.TokenReviewInterface
	reviews authorizationclient.SubjectAccessReviewInterface
	now     func() time.Time

	mu        sync.Mutex
	decisions map[[sha256.Size]byte]decision
}

// decision is the answer given to one token, method and path, and until when it holds.
type decision struct {
	code  int
	until time.Time
}

// metricsFilter is the metrics server's FilterProvider.
func metricsFilter(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	return newMetricsFilter(c, hc, time.Now)
}

func newMetricsFilter(c *rest.Config, hc *http.Client, now func() time.Time) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	a := &metricsAuth{tokens: authn.TokenReviews(), reviews: authz.SubjectAccessReviews(), now: now,
		decisions: map[[sha256.Size]byte]decision{}}
	return a.filter, nil
}

func (a *metricsAuth) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		if verb == "head" {
			verb = "get"
		}
		code, err := a.decide(r, token, verb)
		if err != nil {
			// The token is not logged, nor anything derived from it.
			log.Error(err, "checking a metrics request", "verb", verb, "path", r.URL.Path)
			http.Error(w, "checking the request with the API server failed", http.StatusInternalServerError)
			return
		}
		if code != http.StatusOK {
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// decide returns 200, 401 or 403 for token doing verb on r's path. An error (the API server
// could not be asked) is not remembered.
func (a *metricsAuth) decide(r *http.Request, token, verb string) (int, error) {
	key := sha256.Sum256([]byte(verb + "\x00" + r.URL.Path + "\x00" + token))
	now := a.now()
	a.mu.Lock()
	d, ok := a.decisions[key]
	a.mu.Unlock()
	if ok && now.Before(d.until) {
		return d.code, nil
	}
	code, err := a.review(r, token, verb)
	if err != nil {
		return 0, err
	}
	ttl := denyTTL
	if code == http.StatusOK {
		ttl = allowTTL
	}
	a.remember(key, decision{code: code, until: now.Add(ttl)}, now)
	return code, nil
}

func (a *metricsAuth) review(r *http.Request, token, verb string) (int, error) {
	ctx := r.Context()
	tr, err := a.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.URL.Path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

func (a *metricsAuth) remember(key [sha256.Size]byte, d decision, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.decisions) >= maxDecisions {
		for k, old := range a.decisions {
			if !now.Before(old.until) {
				delete(a.decisions, k)
			}
		}
		if len(a.decisions) >= maxDecisions {
			clear(a.decisions)
		}
	}
	a.decisions[key] = d
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
