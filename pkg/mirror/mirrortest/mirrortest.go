// Package mirrortest runs real registries in-process for tests that copy images:
// go-containerregistry's in-memory registry behind an httptest server that records every
// request, and that can serve below a path, over TLS, behind basic authentication, or refuse
// writes. What a test pushes to set a registry up is neither recorded nor refused.
package mirrortest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// setupHeader marks the requests of Push and Digest, which the registry serves unrecorded.
const setupHeader = "X-Mirrortest-Setup"

// Request is one request a registry received.
type Request struct {
	Method, Path string
	Query        string
	// Authorized says the request carried the credentials BasicAuth asks for.
	Authorized bool
}

// Registry is a running registry.
type Registry struct {
	Server *httptest.Server
	// Host is its host:port, and Prefix the path it serves the API below ("" for /v2/).
	Host, Prefix string

	cfg  config
	mu   sync.Mutex
	reqs []Request
}

type config struct {
	prefix         string
	tls            bool
	refuse         int
	refusal        string
	user, password string
}

// Option changes how a registry serves.
type Option func(*config)

// UnderPath serves the API below prefix (/cache/v2/...), like a mirror whose URL has a path.
func UnderPath(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// TLS serves https with a certificate of its own (see CAFile).
func TLS() Option { return func(c *config) { c.tls = true } }

// RefuseWrites answers every POST, PUT, PATCH and DELETE with status and body.
func RefuseWrites(status int, body string) Option {
	return func(c *config) { c.refuse, c.refusal = status, body }
}

// BasicAuth answers 401 to requests without these credentials.
func BasicAuth(user, password string) Option {
	return func(c *config) { c.user, c.password = user, password }
}

// New starts a registry, stopped when the test ends.
func New(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r := &Registry{}
	for _, o := range opts {
		o(&r.cfg)
	}
	r.Prefix = r.cfg.prefix
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(setupHeader) != "" {
			reg.ServeHTTP(w, req)
			return
		}
		user, password, ok := req.BasicAuth()
		authorized := ok && user == r.cfg.user && password == r.cfg.password
		r.mu.Lock()
		r.reqs = append(r.reqs, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Authorized: authorized})
		r.mu.Unlock()
		if r.cfg.user != "" && !authorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="mirrortest"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		if r.cfg.refuse != 0 && isWrite(req.Method) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(r.cfg.refuse)
			io.WriteString(w, r.cfg.refusal)
			return
		}
		reg.ServeHTTP(w, req)
	}))
	if r.Prefix != "" {
		h = stripPrefix(r.Prefix, h)
	}
	r.Server = httptest.NewUnstartedServer(h)
	// Clients that refuse the certificate are what some tests are about.
	r.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	if r.cfg.tls {
		r.Server.StartTLS()
	} else {
		r.Server.Start()
	}
	t.Cleanup(r.Server.Close)
	r.Host = strings.TrimPrefix(strings.TrimPrefix(r.Server.URL, "http://"), "https://")
	return r
}

// stripPrefix serves the API below prefix only, as a mirror URL with a path does.
func stripPrefix(prefix string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get(setupHeader) != "" {
			h.ServeHTTP(w, req)
			return
		}
		if !strings.HasPrefix(req.URL.Path, prefix+"/") {
			http.NotFound(w, req)
			return
		}
		r2 := req.Clone(req.Context())
		r2.URL.Path = strings.TrimPrefix(req.URL.Path, prefix)
		h.ServeHTTP(w, r2)
	})
}

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

// URL is the registry's URL as a manifest's mirror list gives it: scheme, host and Prefix.
func (r *Registry) URL() string { return r.Server.URL + r.Prefix }

// Requests returns what the registry received since it started, or since the last Reset.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Writes are the requests that were not reads (GET, HEAD).
func (r *Registry) Writes() []Request {
	var out []Request
	for _, q := range r.Requests() {
		if isWrite(q.Method) {
			out = append(out, q)
		}
	}
	return out
}

// Reset forgets the requests received so far.
func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

// CAFile writes the certificate of a TLS registry as a PEM file and returns its path.
func (r *Registry) CAFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Server.Certificate().Raw})
	if err := os.WriteFile(p, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Push stores img (an image or an index) as repo:tag, unrecorded, and returns its digest.
func (r *Registry) Push(t testing.TB, repoTag string, img remote.Taggable) v1.Hash {
	t.Helper()
	ref := r.ref(t, repoTag)
	if err := remote.Push(ref, img, r.setup()...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := remote.Head(ref, r.setup()...)
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest
}

// Get returns the manifest repo:tag names, read unrecorded, or fails the test.
func (r *Registry) Get(t testing.TB, repoTag string) *remote.Descriptor {
	t.Helper()
	d, err := remote.Get(r.ref(t, repoTag), r.setup()...)
	if err != nil {
		t.Fatalf("reading %s: %v", repoTag, err)
	}
	return d
}

// Has reports whether the registry has a manifest under repo:tag or repo@digest.
func (r *Registry) Has(t testing.TB, ref string) bool {
	t.Helper()
	parsed, err := name.ParseReference(r.Host+"/"+ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Head(parsed, r.setup()...)
	return err == nil
}

// Delete removes the tag repo:tag, unrecorded, and keeps the blobs (and an index's images):
// what a run that stopped before writing the manifest leaves.
func (r *Registry) Delete(t testing.TB, repoTag string) {
	t.Helper()
	if err := remote.Delete(r.ref(t, repoTag), r.setup()...); err != nil {
		t.Fatalf("deleting %s: %v", repoTag, err)
	}
}

func (r *Registry) ref(t testing.TB, repoTag string) name.Tag {
	t.Helper()
	ref, err := name.NewTag(r.Host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func (r *Registry) setup() []remote.Option {
	tr := r.Server.Client().Transport.(*http.Transport).Clone()
	return []remote.Option{remote.WithTransport(setup{tr}), remote.WithAuth(authn.Anonymous)}
}

// setup marks a request as the test's own.
type setup struct{ base http.RoundTripper }

func (s setup) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(setupHeader, "1")
	return s.base.RoundTrip(req)
}
