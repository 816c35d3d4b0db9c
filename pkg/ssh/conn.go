package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
)

// maxSessions bounds concurrent commands per connection below OpenSSH's
// default MaxSessions (10), leaving room for the SFTP session.
const maxSessions = 8

// Conn is one host of a Pool. It dials lazily, keeps one connection,
// and redials when the connection has died. It implements Host.
type Conn struct {
	pool   *Pool
	target Target
	slots  chan struct{}

	mu   sync.Mutex // guards cur; held while dialing so callers share one dial
	cur  *link
	gone bool // closed by Close
}

// link is one live SSH connection and what was learned over it.
type link struct {
	client *xssh.Client
	done   chan struct{} // closed when the connection ends

	sudoMu      sync.Mutex
	sudoChecked bool
	sudoErr     error

	sftpMu  sync.Mutex
	sftp    *sftp.Client
	sftpErr error
}

func (l *link) alive() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

var _ Host = (*Conn)(nil)

// Name is the target's name.
func (c *Conn) Name() string { return c.target.String() }

// Target is what this host was created from.
func (c *Conn) Target() Target { return c.target }

// Connect dials the host if it is not connected, which lets callers check
// reachability and host keys before doing anything.
func (c *Conn) Connect(ctx context.Context) error {
	_, err := c.link(ctx)
	return err
}

func (c *Conn) link(ctx context.Context) (*link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return nil, &ConnectError{Host: c.Name(), User: c.target.user(), Address: c.target.addr(), Err: errors.New("the host was closed")}
	}
	if c.cur != nil && c.cur.alive() {
		return c.cur, nil
	}
	client, err := c.pool.connect(ctx, c.target)
	if err != nil {
		return nil, err
	}
	l := &link{client: client, done: make(chan struct{})}
	go func() {
		_ = client.Wait()
		close(l.done)
	}()
	if ka := c.pool.opts.KeepAlive; ka > 0 {
		go keepAlive(l, ka)
	}
	c.cur = l
	return l, nil
}

// keepAlive closes the connection when the server stops answering, so a
// silently dropped connection is noticed and redialed on next use instead
// of hanging a command.
func keepAlive(l *link, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := l.client.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case err := <-reply:
			if err != nil {
				l.client.Close()
				return
			}
			missed = 0
		case <-time.After(every):
			if missed++; missed >= 3 {
				l.client.Close()
				return
			}
		case <-l.done:
			return
		}
	}
}

// drop closes l if it is still the current link, so the next use redials.
func (c *Conn) drop(l *link) {
	c.mu.Lock()
	if c.cur == l {
		c.cur = nil
	}
	c.mu.Unlock()
	l.client.Close()
}

// session opens a session, redialing once if the cached connection turns
// out to be dead. The returned release frees the session slot.
func (c *Conn) session(ctx context.Context) (*xssh.Session, *link, func(), error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, fmt.Errorf("waiting for a free session on %s: %w", c.Name(), ctx.Err())
	}
	release := func() { <-c.slots }
	for attempt := 0; ; attempt++ {
		l, err := c.link(ctx)
		if err != nil {
			release()
			return nil, nil, nil, err
		}
		s, err := newSession(ctx, l)
		if err == nil {
			return s, l, release, nil
		}
		if ctx.Err() != nil {
			release()
			return nil, nil, nil, fmt.Errorf("opening a session on %s: %w", c.Name(), err)
		}
		var oce *xssh.OpenChannelError
		if errors.As(err, &oce) || attempt > 0 {
			release()
			return nil, nil, nil, fmt.Errorf("opening a session on %s: %w", c.Name(), err)
		}
		c.drop(l)
	}
}

// errLinkEnded is newSession's error when the connection ended while the
// session was being opened.
var errLinkEnded = errors.New("the connection ended while opening a session")

// newSession opens a session on l, giving up when ctx ends or the
// connection does. x/crypto's NewSession has no context and can wait
// forever: on a connection that stopped answering, and on one that ended
// just as the channel was requested (its read loop drops the pending
// channels before writes start failing, so a request sent in between is
// never answered). A session that opens after we gave up is closed.
func newSession(ctx context.Context, l *link) (*xssh.Session, error) {
	type result struct {
		s   *xssh.Session
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := l.client.NewSession()
		ch <- result{s, err}
	}()
	giveUp := func(err error) (*xssh.Session, error) {
		go func() {
			if r := <-ch; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, err
	}
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return giveUp(ctx.Err())
	case <-l.done:
		// Prefer a result that is already there: it says more.
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, r.err
			}
			r.s.Close()
			return nil, errLinkEnded
		default:
			return giveUp(errLinkEnded)
		}
	}
}

// Close closes the connection. The Conn cannot be used afterwards.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = true
	if c.cur == nil {
		return nil
	}
	l := c.cur
	c.cur = nil
	l.sftpMu.Lock()
	if l.sftp != nil {
		l.sftp.Close()
	}
	l.sftpMu.Unlock()
	if err := l.client.Close(); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("closing the connection to %s: %w", c.Name(), err)
	}
	return nil
}
