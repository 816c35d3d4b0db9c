package ssh_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// TestTunnel reaches an HTTP server that listens on the loopback of a
// network namespace, through an sshd in that namespace: from here it is
// unreachable, as a kube-apiserver on a private network would be.
func TestTunnel(t *testing.T) {
	sshd.Require(t)
	ns := sshd.NewNetns(t)
	key := sshd.NewKey(t, sshd.TempDir(t), "id", "")
	s := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}, Netns: ns.Name, Address: ns.IP})
	ln, err := ns.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.Host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	private := ln.Addr().String()

	if c, err := net.DialTimeout("tcp", private, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s is reachable from the test: the tunnel test would prove nothing", private)
	}

	p := newPool(t, ssh.Options{})
	h := p.Host(s.Target("cp-1", "root", key))
	ctx := ctxFor(t, time.Minute)

	t.Run("DialContext as an http.Transport dialer", func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{DialContext: h.DialContext}}
		get(t, ctx, client, "http://"+private+"/", "hello from "+private)
	})
	t.Run("local port forwarding", func(t *testing.T) {
		fwd, err := ssh.Forward(ctx, h, "127.0.0.1:0", private)
		if err != nil {
			t.Fatal(err)
		}
		local := fwd.Addr().String()
		for range 3 { // several connections through one forwarder
			get(t, ctx, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, "http://"+local+"/", "hello from "+local)
		}
		if err := fwd.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if c, err := net.DialTimeout("tcp", local, time.Second); err == nil {
			c.Close()
			t.Fatal("forwarder still listening after Close")
		}
	})
	t.Run("dial failure names host and address", func(t *testing.T) {
		_, err := h.DialContext(ctx, "tcp", "127.0.0.1:1")
		if err == nil || err.Error() != "dialing tcp 127.0.0.1:1 from cp-1: ssh: rejected: connect failed (\"Connection refused\")" {
			t.Fatalf("err = %v", err)
		}
	})
}

func get(t *testing.T, ctx context.Context, c *http.Client, url, want string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != want {
		t.Fatalf("GET %s = %q, want %q", url, body, want)
	}
}
