package envtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller"
)

// Manager is a running machine-controller.
type Manager struct {
	cancel   context.CancelFunc
	done     chan struct{} // closed when the manager has returned
	err      error         // what it returned; read after done is closed
	requests *atomic.Int64
	fault    faultFunc
}

// faultFunc holds a func(*http.Request) bool: the requests it picks get a 503 (see SetFault).
type faultFunc struct {
	mu      sync.Mutex
	pick    func(*http.Request) bool
	refused int
}

// TestOptions are controller options scaled down for tests: short polls and timeouts, and the
// controllers confined to namespace ns.
func TestOptions(ns string) controller.Options {
	return controller.Options{
		Namespace:           ns,
		Workers:             4,
		JoinTimeout:         2 * time.Minute,
		UnhealthyTimeout:    2 * time.Minute,
		DrainTimeout:        2 * time.Minute,
		ForcedDeleteTimeout: 2 * time.Second,
		PollInterval:        100 * time.Millisecond,
		ProbeInterval:       100 * time.Millisecond,
		OrphanSweepInterval: 200 * time.Millisecond,
		OrphanGracePeriod:   500 * time.Millisecond,
		LeftoverNamespace:   "kube-system",
	}
}

// StartManager runs the machine-controller with provider, as the machine-controller service
// account, until the test ends or Stop is called. Every API request it makes is counted.
func (e *Env) StartManager(t testing.TB, provider cloud.Provider, opts controller.Options, mo controller.ManagerOptions) *Manager {
	t.Helper()
	m := &Manager{done: make(chan struct{}), requests: &atomic.Int64{}}
	cfg := rest.CopyConfig(e.ControllerConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, m.requests, &m.fault} })
	if mo.MetricsAddr == "" {
		mo.MetricsAddr = "0"
	}
	if mo.ProbeAddr == "" {
		mo.ProbeAddr = "0"
	}
	mo.SkipNameValidation = true
	if mo.QPS == 0 {
		mo.QPS, mo.Burst = 200, 400
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := controller.NewManager(ctx, cfg, provider, opts, mo)
	if err != nil {
		cancel()
		t.Fatalf("creating the machine-controller: %v", err)
	}
	m.cancel = cancel
	go func() { m.err = mgr.Start(ctx); close(m.done) }()
	t.Cleanup(m.Stop)
	return m
}

// Stop stops the controller and waits until it has stopped. Stopping twice is fine.
func (m *Manager) Stop() {
	m.cancel()
	<-m.done
}

// Running reports whether the controller still runs: neither stopped nor ended by an error.
func (m *Manager) Running() bool {
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// Err returns what the controller's Start returned, once it has stopped.
func (m *Manager) Err() error {
	if m.Running() {
		return nil
	}
	return m.err
}

// Requests returns how many API requests the controller has made so far.
func (m *Manager) Requests() int64 { return m.requests.Load() }

// SetFault makes the controller's API requests that pick chooses fail with 503 Service
// Unavailable, as an API server that lost its etcd answers them; nil ends the fault.
func (m *Manager) SetFault(pick func(*http.Request) bool) {
	m.fault.mu.Lock()
	defer m.fault.mu.Unlock()
	m.fault.pick = pick
}

// Refused returns how many requests the fault has refused so far.
func (m *Manager) Refused() int {
	m.fault.mu.Lock()
	defer m.fault.mu.Unlock()
	return m.fault.refused
}

type countingTransport struct {
	rt    http.RoundTripper
	n     *atomic.Int64
	fault *faultFunc
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	c.fault.mu.Lock()
	refuse := c.fault.pick != nil && c.fault.pick(r)
	if refuse {
		c.fault.refused++
	}
	c.fault.mu.Unlock()
	if refuse {
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is unavailable (envtest fault)","reason":"ServiceUnavailable","code":503}`
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	}
	return c.rt.RoundTrip(r)
}
