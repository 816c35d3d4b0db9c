package openstack_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
)

// TestResponseSizeIsBounded: a hostile or broken endpoint that answers with an endless body, or
// announces a huge one, gets a clear error instead of the controller's memory.
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostile := httptest.NewTLSServer(tc.handler)
			t.Cleanup(hostile.Close)
			ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hostile.Certificate().Raw})
			env := map[string]string{"OS_AUTH_URL": hostile.URL + "/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p",
				"OS_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo", "OS_CACERT": string(ca)}
			p := newProvider(t, nil, openstack.Options{LookupEnv: lookupIn(env), MaxResponseBytes: limit})
			err := p.Validate(context.Background(), newMachine(t, map[string]any{"image": "i", "flavor": "f"}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
