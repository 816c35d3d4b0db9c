package openstack

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// ErrResponseTooLarge is the error of a cloud response whose body is larger than
// Options.MaxResponseBytes. Length is the announced length, or -1 when the body ran over while
// being read.
type ErrResponseTooLarge struct {
	Method, URL string
	Limit       int64
	Length      int64
}

func (e *ErrResponseTooLarge) Error() string {
	size := "more"
	if e.Length >= 0 {
		size = fmt.Sprintf("%d bytes", e.Length)
	}
	return fmt.Sprintf("the cloud's response to %s %s is larger than the limit of %d bytes (%s); refusing to read it",
		e.Method, e.URL, e.Limit, size)
}

// limitedBody reads at most left bytes and then fails with tooLarge, instead of truncating
// silently: a truncated JSON document could still decode into something plausible.
type limitedBody struct {
	rc       io.ReadCloser
	left     int64
	tooLarge error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, b.tooLarge
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// baseTransport is the transport under the rate limiter: given, or a clone of
// http.DefaultTransport that trusts only OS_CACERT's certificates when it is set, as the
// OpenStack clients do with a CA bundle.
func baseTransport(given http.RoundTripper, lookup func(string) (string, bool)) (http.RoundTripper, error) {
	ca, _ := lookup("OS_CACERT")
	ca = strings.TrimSpace(ca)
	if given != nil {
		if ca != "" {
			return nil, errors.New("OS_CACERT cannot apply to a transport given in Options.Transport")
		}
		return given, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if ca == "" {
		return tr, nil
	}
	pool, err := caPool(ca)
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig.RootCAs = pool
	return tr, nil
}

// caPool is the pool of the certificates OS_CACERT holds or names.
func caPool(ca string) (*x509.CertPool, error) {
	pem, err := cloud.ReadCA(ca)
	if err != nil {
		return nil, fmt.Errorf("OS_CACERT: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool, nil
}
