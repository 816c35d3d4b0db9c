package openstack_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestResponseSizeIsBounded: a hostile or broken endpoint that answers with an endless body, or
// announces a huge one, or packs tiny values into a small one, gets a clear error instead of the
// controller's memory.
func TestResponseSizeIsBounded(t *testing.T) {
	const limit = 64 << 10
	start, chunk := []byte(`{"token":{"padding":"`), []byte(strings.Repeat("x", 4096))
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"endless body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(start) // a JSON string that never ends
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "larger than the limit of 65536 bytes (more)"},
		{"announced size", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(1<<30))
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(start)
		}, "larger than the limit of 65536 bytes (1073741824 bytes)"},
		{"many values within the size", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"token":{"catalog":[` + strings.Repeat(`{},`, 20000) + `{}]}}`))
		}, "holds more than 10000 JSON values; refusing to decode it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostile := httptest.NewTLSServer(tc.handler)
			t.Cleanup(hostile.Close)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hostile.Certificate().Raw})
			env := map[string]string{"OS_AUTH_URL": hostile.URL + "/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p",
				"OS_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo", "OS_CACERT": string(ca)}
			p := newProvider(t, nil, openstack.Options{LookupEnv: lookupIn(env), MaxResponseBytes: limit, MaxResponseValues: 10000})
			err := p.Validate(context.Background(), newMachine(t, map[string]any{"image": "i", "flavor": "f"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

// TestHostileResponseFitsThePod: a server list page as large as the default limits let through,
// made of the values that cost the decoder most per byte (small objects, 50 times their bytes
// in generic maps), is refused before it is decoded; the whole call allocates a small part of
// the controller's 256 MiB, where decoding it would allocate about 200 MiB.
func TestHostileResponseFitsThePod(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	body := []byte(`{"servers":[` + strings.Repeat(`{"a":0},`, (4<<20)/8-8) + `{"a":0}]}`)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sim.CACert())
	base := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(base.CloseIdleConnections)
	// The simulator answers everything but the server list, which the hostile body answers.
	tr := roundTripper(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, "/servers/detail") {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(body)), ContentLength: -1, Request: r}, nil
		}
		return base.RoundTrip(r)
	})
	env := simEnv(sim)
	delete(env, "OS_CACERT")
	p := newProvider(t, sim, openstack.Options{LookupEnv: lookupIn(env), Transport: tr})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := p.List(context.Background(), newMachine(t, spec(sim, nil)))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "JSON values; refusing to decode it") {
		t.Fatalf("want the list refused for its values, got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Fatalf("listing allocated %d MiB for a %d KiB response", alloc>>20, len(body)>>10)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
