package openstack

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

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

// ErrResponseTooComplex is the error of a cloud response whose body holds more JSON values
// than Options.MaxResponseValues. The cloud's answers are decoded into generic maps and slices
// first (gophercloud), which costs 50 times the bytes and more for a body of tiny values: the
// count bounds that, where the byte limit bounds the strings.
type ErrResponseTooComplex struct {
	Method, URL string
	Limit       int
}

func (e *ErrResponseTooComplex) Error() string {
	return fmt.Sprintf("the cloud's response to %s %s holds more than %d JSON values; refusing to decode it, "+
		"which would take more memory than the machine-controller has", e.Method, e.URL, e.Limit)
}

// readBounded reads a whole response body, at most maxBytes of it and with at most maxValues
// JSON values (objects, arrays, members and elements, counted by their delimiters outside
// strings), and fails with tooLarge or tooComplex past either limit, instead of truncating
// silently: a truncated JSON document could still decode into something plausible. Only then
// does the body reach the decoder, which so never sees more than the controller can hold.
func readBounded(r io.Reader, maxBytes int64, maxValues int, tooLarge, tooComplex error) ([]byte, int, error) {
	var (
		buf      bytes.Buffer
		chunk    [32 << 10]byte
		values   int
		inString bool
		escaped  bool
	)
	for {
		n, err := r.Read(chunk[:])
		if int64(buf.Len()+n) > maxBytes {
			return nil, 0, tooLarge
		}
		for _, c := range chunk[:n] {
			switch {
			case escaped:
				escaped = false
			case inString:
				escaped = c == '\\'
				inString = c != '"'
			case c == '"':
				inString = true
			case c == '{' || c == '[' || c == ',' || c == ':':
				values++
			}
		}
		if values > maxValues {
			return nil, 0, tooComplex
		}
		buf.Write(chunk[:n])
		if err == io.EOF {
			return buf.Bytes(), values, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

// decodeCost estimates the heap a body takes while gophercloud decodes it into generic maps and
// slices: the body itself and its strings, and at most 150 bytes per value (a one-key object
// costs about 400 bytes for its three delimiters).
func decodeCost(bytes, values int) int64 { return 2*int64(bytes) + 150*int64(values) }

// budget bounds the estimated cost of the response bodies being decoded at once, so that ten
// workers answered at the limits at the same time still fit the controller's memory: a body
// is held from when it has been read until the decoder closes it.
type budget struct {
	sem   *semaphore.Weighted
	total int64
}

func newBudget(total int64) *budget { return &budget{sem: semaphore.NewWeighted(total), total: total} }

// hold waits until cost fits (a cost above the total takes all of it) and returns its release.
func (b *budget) hold(ctx context.Context, cost int64) (func(), error) {
	cost = min(max(cost, 1), b.total)
	if err := b.sem.Acquire(ctx, cost); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.sem.Release(cost) }) }, nil
}

// heldBody is a read body that releases its share of the budget when closed, or read to its
// end, whichever comes first (a caller that never closes it must not starve the others).
type heldBody struct {
	r       *bytes.Reader
	release func()
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.release()
	}
	return n, err
}

func (b *heldBody) Close() error { b.release(); return nil }

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
