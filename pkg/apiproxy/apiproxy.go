// Package apiproxy serves an HTTP CONNECT proxy whose tunnels are opened through SSH, so that
// kubectl and other clients on the operator's machine reach a cluster's API server when its
// endpoint is private: reachable from the control planes (or through the bastion) but not from
// here. It only opens tunnels to the addresses it is given (the API endpoint and the control
// planes' API servers); anything else is refused, so it never becomes a way into the private
// network at large.
package apiproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Dialer opens connections from a host, as ssh.Host does.
type Dialer interface {
	Name() string
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Proxy is an http.Handler that answers CONNECT requests for its allowed destinations with a
// tunnel opened through the first of its hosts that can dial the destination. The host that
// worked last is tried first next time. It is safe for concurrent use.
type Proxy struct {
	hosts   []Dialer
	allowed []string
	// Log, when set, receives a line per refused or failed request, and with Verbose a line per
	// tunnel opened and closed.
	Log     io.Writer
	Verbose bool

	mu        sync.Mutex
	preferred int
	logMu     sync.Mutex
	tunnels   sync.WaitGroup
}

// New returns a proxy that tunnels through hosts (in order) to the allowed destinations,
// given as host:port.
func New(hosts []Dialer, allowed []string) (*Proxy, error) {
	if len(hosts) == 0 {
		return nil, errors.New("apiproxy: no host to tunnel through")
	}
	p := &Proxy{hosts: hosts}
	for _, a := range allowed {
		c, err := canonical(a)
		if err != nil {
			return nil, fmt.Errorf("apiproxy: allowed destination %q: %w", a, err)
		}
		if !slices.Contains(p.allowed, c) {
			p.allowed = append(p.allowed, c)
		}
	}
	if len(p.allowed) == 0 {
		return nil, errors.New("apiproxy: no allowed destination")
	}
	return p, nil
}

// Allowed lists the destinations the proxy opens tunnels to.
func (p *Proxy) Allowed() []string { return slices.Clone(p.allowed) }

// canonical lower-cases the host of host:port and checks the port.
func canonical(hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	if host == "" || port == "" {
		return "", errors.New("host and port are required")
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// ServeHTTP answers CONNECT requests; any other method gets 405.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		w.Header().Set("Allow", http.MethodConnect)
		http.Error(w, "slipway proxy tunnels HTTPS to the cluster's API with CONNECT only; use it as an https proxy (HTTPS_PROXY or the kubeconfig's proxy-url)", http.StatusMethodNotAllowed)
		return
	}
	dest, err := canonical(r.Host)
	if err != nil || !slices.Contains(p.allowed, dest) {
		p.logf("refused CONNECT %s from %s: not the cluster's API", r.Host, r.RemoteAddr)
		http.Error(w, fmt.Sprintf("slipway proxy only opens tunnels to the cluster's API (%s), not to %s", strings.Join(p.allowed, ", "), r.Host), http.StatusForbidden)
		return
	}
	remote, via, err := p.dial(r.Context(), dest)
	if err != nil {
		p.logf("CONNECT %s failed: %v", dest, err)
		http.Error(w, fmt.Sprintf("slipway proxy could not reach %s: %v", dest, err), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		remote.Close()
		http.Error(w, "slipway proxy: this connection cannot be taken over for a tunnel (HTTP/2?)", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		remote.Close()
		p.logf("CONNECT %s: taking over the connection: %v", dest, err)
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		remote.Close()
		return
	}
	p.tunnels.Add(1)
	defer p.tunnels.Done()
	start := time.Now()
	p.tracef("[%s] tunnel to %s for %s opened", via, dest, r.RemoteAddr)
	// The client may have sent the start of its TLS handshake with the CONNECT: what the
	// server's reader buffered is read first.
	up, down := ssh.Splice(r.Context(), &bufferedConn{Conn: client, r: buf.Reader}, remote)
	p.tracef("[%s] tunnel to %s for %s closed after %s: %d bytes sent, %d received", via, dest, r.RemoteAddr, time.Since(start).Round(time.Millisecond), up, down)
}

// dial opens a connection to dest through the preferred host, then through the others in
// order. It returns the connection and the name of the host that opened it.
func (p *Proxy) dial(ctx context.Context, dest string) (net.Conn, string, error) {
	p.mu.Lock()
	first := p.preferred
	p.mu.Unlock()
	var errs []error
	for i := range p.hosts {
		n := (first + i) % len(p.hosts)
		h := p.hosts[n]
		c, err := h.DialContext(ctx, "tcp", dest)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if n != first {
			p.mu.Lock()
			p.preferred = n
			p.mu.Unlock()
			p.logf("[%s] now tunnelling through this host", h.Name())
		}
		return c, h.Name(), nil
	}
	return nil, "", errors.Join(errs...)
}

// Check opens and closes a tunnel to the first allowed destination (the API endpoint), so that a
// proxy that cannot work fails before it serves. It returns the host the tunnel went through.
func (p *Proxy) Check(ctx context.Context) (string, error) {
	c, via, err := p.dial(ctx, p.allowed[0])
	if err != nil {
		return "", fmt.Errorf("no control plane could open a connection to %s: %w", p.allowed[0], err)
	}
	return via, c.Close()
}

func (p *Proxy) tracef(format string, args ...any) {
	if p.Verbose {
		p.logf(format, args...)
	}
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Log == nil {
		return
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.Log, format+"\n", args...)
}

// Serve answers proxy requests on ln until ctx ends, then stops listening and closes the open
// tunnels.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		// Requests' contexts derive from ctx: a tunnel, which runs within its request, is
		// closed when ctx ends.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := srv.Shutdown(shutdown)
	p.tunnels.Wait()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// bufferedConn reads what a bufio.Reader already holds before reading the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the connection when it can be, so the client sees the server's EOF.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
