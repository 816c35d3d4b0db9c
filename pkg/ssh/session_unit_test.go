package ssh

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// silentLink returns a link to an in-process SSH server that completes the
// handshake and then never answers a channel request: NewSession on it
// waits forever, as it does when x/crypto loses the race between a
// connection ending and a channel request (the request is sent after the
// read loop dropped the pending channels, so nothing ever answers it).
func silentLink(t *testing.T) *link {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := xssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srvCfg := &xssh.ServerConfig{NoClientAuth: true}
	srvCfg.AddHostKey(hostKey)
	// Loopback TCP, not net.Pipe: both sides write their version first,
	// which an unbuffered pipe would deadlock.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		srvConn, err := ln.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { srvConn.Close() })
		// Handshake, then read nothing from the channel queue: requests
		// pile up unanswered.
		_, _, reqs, err := xssh.NewServerConn(srvConn, srvCfg)
		if err == nil {
			xssh.DiscardRequests(reqs)
		}
	}()
	cliConn, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cliConn.Close() })
	c, chans, reqs, err := xssh.NewClientConn(cliConn, "silent", &xssh.ClientConfig{
		User: "test", HostKeyCallback: xssh.FixedHostKey(hostKey.PublicKey()),
	})
	if err != nil {
		t.Fatalf("handshake with the in-process server: %v", err)
	}
	client := xssh.NewClient(c, chans, reqs)
	t.Cleanup(func() { client.Close() })
	return &link{client: client, done: make(chan struct{})}
}

func TestNewSessionGivesUpWhenTheLinkEnds(t *testing.T) {
	l := silentLink(t)
	errc := make(chan error, 1)
	go func() {
		_, err := newSession(context.Background(), l)
		errc <- err
	}()
	select {
	case err := <-errc:
		t.Fatalf("newSession returned before anything ended: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(l.done) // what link's Wait goroutine does when the connection ends
	select {
	case err := <-errc:
		if !errors.Is(err, errLinkEnded) {
			t.Fatalf("err = %v, want errLinkEnded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("newSession kept waiting after the connection ended")
	}
}

func TestNewSessionGivesUpWhenCtxEnds(t *testing.T) {
	l := silentLink(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := newSession(ctx, l)
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("newSession ignored its context")
	}
}
