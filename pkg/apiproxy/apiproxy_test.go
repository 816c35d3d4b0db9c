package apiproxy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apiproxy"
)

// host dials from this machine, as a control plane's SSH connection dials from the host, and
// counts its dials; a host that is down refuses every dial.
type host struct {
	name  string
	down  bool
	dials atomic.Int32
}

func (h *host) Name() string { return h.name }

func (h *host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	h.dials.Add(1)
	if h.down {
		return nil, fmt.Errorf("dialing %s %s from %s: ssh: connect: connection refused", network, addr, h.name)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// syncBuffer is a log written by the proxy's goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts p on a loopback port until the test ends, and returns its URL and a function
// that stops it and returns Serve's error.
func serve(t *testing.T, p *apiproxy.Proxy) (*url.URL, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serveErr = <-done:
			case <-time.After(10 * time.Second):
				serveErr = errors.New("Serve did not return within 10s of its context ending")
			}
		})
		return serveErr
	}
	t.Cleanup(func() { _ = stop() })
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}, stop
}

func TestTunnelFailsOverAndKeepsToTheHostThatAnswered(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok from the API")
	}))
	defer api.Close()
	down, up := &host{name: "cp-1", down: true}, &host{name: "cp-2"}
	p, err := apiproxy.New([]apiproxy.Dialer{down, up}, []string{api.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	p.Log, p.Verbose = &log, true
	proxyURL, _ := serve(t, p)

	pool := x509.NewCertPool()
	pool.AddCert(api.Certificate())
	get := func() {
		t.Helper()
		// A new transport per request: each request opens a new tunnel.
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			Proxy:           http.ProxyURL(proxyURL),
			TLSClientConfig: &tls.Config{RootCAs: pool},
		}}
		defer c.CloseIdleConnections()
		resp, err := c.Get(api.URL)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v\nproxy log:\n%s", api.URL, err, log.String())
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(body) != "ok from the API" {
			t.Fatalf("GET through the proxy: %s %q", resp.Status, body)
		}
	}
	get()
	if down.dials.Load() != 1 || up.dials.Load() != 1 {
		t.Fatalf("first tunnel: cp-1 dialled %d times, cp-2 %d times; want 1 and 1", down.dials.Load(), up.dials.Load())
	}
	get()
	if down.dials.Load() != 1 || up.dials.Load() != 2 {
		t.Fatalf("second tunnel: cp-1 dialled %d times, cp-2 %d times; want cp-2 tried first (1 and 2)", down.dials.Load(), up.dials.Load())
	}
	for _, want := range []string{"[cp-2] now tunnelling through this host", "[cp-2] tunnel to " + api.Listener.Addr().String()} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the proxy's log lacks %q:\n%s", want, log.String())
		}
	}
}

// connect sends a raw request to the proxy and returns its status line and body.
func connect(t *testing.T, proxy *url.URL, request string) (*http.Response, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the proxy's answer to %q: %v", request, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestRefusals(t *testing.T) {
	h := &host{name: "cp-1"}
	p, err := apiproxy.New([]apiproxy.Dialer{h}, []string{"API.example.test:6443", "10.0.0.5:6443"})
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	p.Log = &log
	proxyURL, _ := serve(t, p)

	resp, body := connect(t, proxyURL, "CONNECT 10.0.0.6:22 HTTP/1.1\r\nHost: 10.0.0.6:22\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "api.example.test:6443, 10.0.0.5:6443") || !strings.Contains(body, "not to 10.0.0.6:22") {
		t.Errorf("CONNECT to a host that is not the API: %s %q; want 403 naming what is allowed", resp.Status, body)
	}
	resp, body = connect(t, proxyURL, "GET http://10.0.0.5:6443/ HTTP/1.1\r\nHost: 10.0.0.5:6443\r\n\r\n")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "CONNECT" || !strings.Contains(body, "CONNECT only") {
		t.Errorf("plain HTTP through the proxy: %s (Allow %q) %q; want 405", resp.Status, resp.Header.Get("Allow"), body)
	}
	if n := h.dials.Load(); n != 0 {
		t.Errorf("refused requests dialled %d times", n)
	}
	// A host name is matched regardless of case; the dial fails (no such name), which is a 502
	// that says why.
	resp, body = connect(t, proxyURL, "CONNECT api.EXAMPLE.test:6443 HTTP/1.1\r\nHost: api.EXAMPLE.test:6443\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "could not reach api.example.test:6443") {
		t.Errorf("CONNECT to the endpoint that cannot be reached: %s %q; want 502", resp.Status, body)
	}
	if !strings.Contains(log.String(), "refused CONNECT 10.0.0.6:22") {
		t.Errorf("the refusal is not logged:\n%s", log.String())
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := apiproxy.New(nil, []string{"a:1"}); err == nil {
		t.Error("New without hosts succeeded")
	}
	if _, err := apiproxy.New([]apiproxy.Dialer{&host{name: "h"}}, nil); err == nil {
		t.Error("New without destinations succeeded")
	}
	if _, err := apiproxy.New([]apiproxy.Dialer{&host{name: "h"}}, []string{"no-port"}); err == nil || !strings.Contains(err.Error(), `"no-port"`) {
		t.Errorf("New with a destination without a port: %v", err)
	}
}

func TestCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, err := apiproxy.New([]apiproxy.Dialer{&host{name: "cp-1", down: true}, &host{name: "cp-2"}}, []string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if via, err := p.Check(context.Background()); err != nil || via != "cp-2" {
		t.Errorf("Check = %q, %v; want cp-2", via, err)
	}
	p, err = apiproxy.New([]apiproxy.Dialer{&host{name: "cp-1", down: true}}, []string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Check through a host that is down: %v", err)
	}
}

// TestStopClosesTunnels holds a tunnel open to an echo server, stops the proxy, and checks that
// Serve returns and the client's connection is closed.
func TestStopClosesTunnels(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	p, err := apiproxy.New([]apiproxy.Dialer{&host{name: "cp-1"}}, []string{echo.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	proxyURL, stop := serve(t, p)
	c, err := net.DialTimeout("tcp", proxyURL.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// The request and the first bytes of the tunnel in one write, as a client in a hurry sends
	// them: the bytes the proxy's reader buffered must still reach the server.
	if _, err := fmt.Fprintf(c, "CONNECT %[1]s HTTP/1.1\r\nHost: %[1]s\r\n\r\nhello ", echo.Addr()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	if _, err := io.WriteString(c, "world\n"); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil || line != "hello world\n" {
		t.Fatalf("through the tunnel: %q, %v; want the echo of both writes", line, err)
	}
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if n, err := r.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the tunnel is still open after the proxy stopped (read %d bytes)", n)
	} else if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Fatalf("the tunnel was not closed when the proxy stopped: %v", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
