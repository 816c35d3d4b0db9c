package mirror

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
)

// transports holds one HTTP transport per TLS setting, so that the images of a run share
// connections to each place.
type transports struct {
	mu   sync.Mutex
	byTL map[v1beta1.RegistryTLSConfig]*http.Transport
}

// get returns the transport for a TLS setting (nil: the system's roots, verified).
func (ts *transports) get(c *v1beta1.RegistryTLSConfig) (*http.Transport, error) {
	var key v1beta1.RegistryTLSConfig
	if c != nil {
		key = *c
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.byTL[key]; ok {
		return t, nil
	}
	t := remote.DefaultTransport.(*http.Transport).Clone()
	// Unverified only where the manifest says insecureSkipVerify, or --insecure for the destination.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: key.InsecureSkipVerify}
	if key.CAFile != "" {
		pem, err := config.ReadCAFile(key.CAFile)
		if err != nil {
			return nil, err
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tlsConfig.caFile %s holds no PEM certificate", key.CAFile)
		}
		cfg.RootCAs = pool
	}
	t.TLSClientConfig = cfg
	if ts.byTL == nil {
		ts.byTL = map[v1beta1.RegistryTLSConfig]*http.Transport{}
	}
	ts.byTL[key] = t
	return t, nil
}

// route adapts the requests to one place as containerd does, and leaves requests to other hosts
// (token servers, redirects to blob storage) alone.
type route struct {
	base http.RoundTripper
	// host is the place's host[:port].
	host string
	// scheme, when set, is the only one allowed: go-containerregistry also tries plain http for
	// private and loopback addresses, which an https mirror must not be reached over.
	scheme string
	// prefix is the path of a mirror URL (https://mirror.example/cache is asked
	// /cache/v2/...), without the /v2 that containerd adds.
	prefix string
	// ns is the registry a mirror is asked on behalf of, passed as containerd passes it (?ns=),
	// so that a mirror of several registries can tell them apart.
	ns string
}

func (r *route) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.host {
		return r.base.RoundTrip(req)
	}
	if r.scheme != "" && req.URL.Scheme != r.scheme {
		return nil, fmt.Errorf("%s is configured as %s://, not reached over %s", r.host, r.scheme, req.URL.Scheme)
	}
	if (r.prefix == "" && r.ns == "") || !(req.URL.Path == "/v2" || strings.HasPrefix(req.URL.Path, "/v2/")) {
		return r.base.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Path = r.prefix + req.URL.Path
	out.URL.RawPath = ""
	if r.ns != "" {
		q := out.URL.Query()
		q.Set("ns", r.ns)
		out.URL.RawQuery = q.Encode()
	}
	return r.base.RoundTrip(out)
}

// counting counts the bytes of the request bodies it sends: what an image's copy uploaded.
type counting struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return c.base.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.Body = &countingBody{ReadCloser: req.Body, n: c.n}
	return c.base.RoundTrip(out)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
