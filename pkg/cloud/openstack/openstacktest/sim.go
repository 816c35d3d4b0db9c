package openstacktest

import (
	"context"
	"crypto/tls"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// DefaultRegion is the region of a Sim whose Options name none.
const DefaultRegion = "RegionOne"

// Options configure a Sim. The zero value is usable.
type Options struct {
	// Region is the region of every catalog endpoint; default DefaultRegion.
	Region string
	// TokenTTL is how long a Keystone token stays valid; default one hour.
	TokenTTL time.Duration
	// BuildTime is how long a new server stays in BUILD. Even when it is zero the server is
	// returned in BUILD and turns ACTIVE asynchronously, as Nova does.
	BuildTime time.Duration
	// DeleteTime is how long a deleted server is still listed with task_state "deleting".
	DeleteTime time.Duration
	// Latency is added to every API call.
	Latency time.Duration
	// MaxMicroversion is the highest Nova microversion served; default "2.96".
	MaxMicroversion string
	// Seed seeds the randomness of fault injection; default 1, so runs repeat.
	Seed uint64
	// Hypervisor runs the machines behind servers and realizes networking. Nil keeps servers as
	// records only: they turn ACTIVE without running anything.
	Hypervisor Hypervisor
	// Logf, when set, receives one line per API call.
	Logf func(format string, args ...any)
}

// Sim is a running simulated OpenStack. All methods are safe for concurrent use.
type Sim struct {
	opts     Options
	server   *httptest.Server
	handler  http.Handler
	ctx      context.Context
	cancel   context.CancelFunc
	tasks    sync.WaitGroup
	mu       sync.Mutex
	st       *state
	faults   *faultTable
	rng      *rand.Rand
	counters counters
	closed   bool
	// ops serializes the hypervisor calls for one server (a *sync.Mutex per server ID).
	ops sync.Map
	// netDirty wakes the network sync loop; it holds at most one pending wake-up.
	netDirty chan struct{}
	// caPEM is the CA of a certificate from SelfSigned the Sim serves, for CACert.
	caPEM []byte
}

// New starts a Sim on a random loopback port. Close it when done.
func New(opts Options) *Sim {
	s := Prepare(opts)
	s.start(nil, false, nil)
	return s
}

// Serve starts a Sim on an existing listener, for the standalone command.
func Serve(l net.Listener, opts Options) *Sim {
	s := Prepare(opts)
	s.start(l, false, nil)
	return s
}

// Prepare makes a Sim that does not serve yet, so that its seeded state can be read (for
// example to set up the network it is to be served on) before Start.
func Prepare(opts Options) *Sim { return newSim(opts) }

// Start serves a prepared Sim on l: https with cert when cert is not nil (see SelfSigned),
// plain http otherwise.
func (s *Sim) Start(l net.Listener, cert *tls.Certificate) {
	s.start(l, cert != nil, cert)
}

// start records the base URL before the server accepts a connection, so that handlers read
// it without a lock and without racing with its write. A nil listener is a random loopback
// port; https without a certificate uses httptest's own.
func (s *Sim) start(l net.Listener, https bool, cert *tls.Certificate) {
	s.server = httptest.NewUnstartedServer(s.handler)
	if l != nil {
		s.server.Listener.Close()
		s.server.Listener = l
	}
	if !https {
		s.st.baseURL = "http://" + s.server.Listener.Addr().String()
		s.server.Start()
		return
	}
	if cert != nil {
		s.server.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
	}
	s.st.baseURL = "https://" + s.server.Listener.Addr().String()
	s.server.StartTLS()
}

func newSim(opts Options) *Sim {
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.MaxMicroversion == "" {
		opts.MaxMicroversion = "2.96"
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{
		opts:   opts,
		ctx:    ctx,
		cancel: cancel,
		st:     newState(),
		faults: &faultTable{},
		rng:    rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
	}
	s.st.seed()
	s.handler = s.routes()
	if opts.Hypervisor != nil {
		s.netDirty = make(chan struct{}, 1)
		s.tasks.Add(1)
		go s.syncNetworkLoop()
		s.networkChanged()
	}
	return s
}

// URL is the simulator's base URL, e.g. http://127.0.0.1:41234.
func (s *Sim) URL() string { return s.server.URL }

// AuthURL is the Keystone v3 endpoint to authenticate against.
func (s *Sim) AuthURL() string { return s.server.URL + "/identity/v3" }

// Region is the region of the catalog endpoints.
func (s *Sim) Region() string { return s.opts.Region }

// Close stops the server, cancels running hooks and waits for background work to end.
func (s *Sim) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	if s.server != nil {
		s.server.Close()
	}
	s.tasks.Wait()
}

// SetLatency changes the latency added to every call.
func (s *Sim) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.Latency = d
}

// SetBuildTime changes how long new servers stay in BUILD.
func (s *Sim) SetBuildTime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.BuildTime = d
}

// SetDeleteTime changes how long deleted servers linger with task_state "deleting".
func (s *Sim) SetDeleteTime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.DeleteTime = d
}

// after runs f once d has passed, in the background, unless the Sim is closed first.
func (s *Sim) after(d time.Duration, f func()) {
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.tasks.Add(1)
	}
	s.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer s.tasks.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			f()
		case <-s.ctx.Done():
		}
	}()
}
