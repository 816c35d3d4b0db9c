package openstacktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Recorder is an endpoint that answers every request with Keystone's 401 and keeps what it
// received: a Keystone somebody other than the operator runs, for tests that prove what a client
// does or does not send there. Its TLS certificate is httptest's, the same as a NewTLS Sim's, so
// a client that trusts the Sim trusts the Recorder too. Close it when done.
type Recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
}

// NewRecorder starts a Recorder on a random loopback port, over https.
func NewRecorder() *Recorder {
	r := &Recorder{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.URL.Path+" "+string(body))
		r.mu.Unlock()
		writeError(w, serviceIdentity, errf(http.StatusUnauthorized, "The request you have made requires authentication."))
	}))
	return r
}

// Requests returns what the Recorder received, one "METHOD path body" per request.
func (r *Recorder) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}
