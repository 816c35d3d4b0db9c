package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// DialContext opens a connection from the host to addr, so that
// rest.Config.Dial or an http.Transport reaches addresses only the host
// can reach. Host names in addr are resolved on the host.
func (c *Conn) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	for attempt := 0; ; attempt++ {
		l, err := c.link(ctx)
		if err != nil {
			return nil, err
		}
		conn, err := l.client.DialContext(ctx, network, addr)
		if err == nil {
			return conn, nil
		}
		if l.alive() || attempt > 0 || ctx.Err() != nil {
			return nil, fmt.Errorf("dialing %s %s from %s: %w", network, addr, c.Name(), err)
		}
		c.drop(l)
	}
}

// Forwarder forwards local TCP connections to an address reached from a
// host: local port forwarding, like ssh -L.
type Forwarder struct {
	ln     net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	errs []error
}

// Forward listens on local ("127.0.0.1:0" picks a free port) and forwards
// each accepted connection to remote through h. It stops when ctx ends or
// Close is called.
func Forward(ctx context.Context, h Host, local, remote string) (*Forwarder, error) {
	ln, err := net.Listen("tcp", local)
	if err != nil {
		return nil, fmt.Errorf("forwarding %s to %s on %s: %w", local, remote, h.Name(), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Forwarder{ln: ln, cancel: cancel}
	context.AfterFunc(ctx, func() { ln.Close() })
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			lc, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.serve(ctx, h, lc, remote)
			}()
		}
	}()
	return f, nil
}

// Addr is the local address to connect to.
func (f *Forwarder) Addr() net.Addr { return f.ln.Addr() }

// Close stops listening, closes forwarded connections, and returns the
// errors of forwarded connections that could not be dialed.
func (f *Forwarder) Close() error {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

func (f *Forwarder) serve(ctx context.Context, h Host, lc net.Conn, remote string) {
	defer lc.Close()
	rc, err := h.DialContext(ctx, "tcp", remote)
	if err != nil {
		f.mu.Lock()
		f.errs = append(f.errs, err)
		f.mu.Unlock()
		return
	}
	Splice(ctx, lc, rc)
}

// Splice copies between a and b in both directions until both sides have finished or ctx
// ends, then closes both. When one side reaches EOF, the other is half-closed (where it can
// be), so that it can still answer. It returns the bytes copied from a to b and from b to a.
func Splice(ctx context.Context, a, b net.Conn) (aToB, bToA int64) {
	defer a.Close()
	defer b.Close()
	stop := context.AfterFunc(ctx, func() { a.Close(); b.Close() })
	defer stop()
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn, n *int64) {
		defer wg.Done()
		*n, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	wg.Add(2)
	go pipe(b, a, &aToB)
	go pipe(a, b, &bToA)
	wg.Wait()
	return aToB, bToA
}
