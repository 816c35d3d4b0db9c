package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// connect dials t (through its bastions), retrying transient failures with
// exponential backoff for Options.ConnectTimeout. A failing bastion is not
// retried here: its own connect already did. The host's time starts once its
// bastion answers, so that a host booting beside a slow bastion gets the whole
// ConnectTimeout too.
func (p *Pool) connect(ctx context.Context, t Target) (*xssh.Client, error) {
	if err := t.validate(); err != nil {
		return nil, &ConnectError{Host: t.String(), User: t.user(), Address: t.addr(), Err: err}
	}
	if len(t.Bastions) > 0 {
		hops := t.hops()
		if _, err := p.Conn(hops[len(hops)-2]).link(ctx); err != nil {
			return nil, &ConnectError{Host: t.String(), User: t.user(), Address: t.addr(), Via: via(t), Err: err}
		}
	}
	start := time.Now()
	deadline := start.Add(p.opts.ConnectTimeout)
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		client, retry, err := p.connectOnce(ctx, t)
		if err == nil {
			return client, nil
		}
		wait := min(backoff, time.Until(deadline))
		if !retry || wait <= 0 || ctx.Err() != nil {
			if retry && attempt > 1 {
				err = fmt.Errorf("%w (gave up after %d attempts in %s)", err, attempt, time.Since(start).Round(100*time.Millisecond))
			}
			return nil, &ConnectError{Host: t.String(), User: t.user(), Address: t.addr(), Via: via(t), Err: err}
		}
		if attempt == 1 {
			p.note(t.String(), "SSH is not answering yet (%v); retrying for up to %s", err, p.opts.ConnectTimeout)
		}
		select {
		case <-ctx.Done():
			return nil, &ConnectError{Host: t.String(), User: t.user(), Address: t.addr(), Via: via(t), Err: ctx.Err()}
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 4*time.Second)
	}
}

// note writes one line about host to Options.Notices, or Verbose.
func (p *Pool) note(host, format string, args ...any) {
	v := p.opts.Notices
	if v == nil {
		v = p.opts.Verbose
	}
	if v != nil {
		w := newPrefixWriter(v, &p.verboseMu, host, p.opts.Secrets)
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
	}
}

func via(t Target) string {
	if len(t.Bastions) == 0 {
		return ""
	}
	return t.Bastions[len(t.Bastions)-1].String()
}

func (p *Pool) connectOnce(ctx context.Context, t Target) (client *xssh.Client, retry bool, err error) {
	if p.isClosed() {
		return nil, false, errors.New("the connection pool is closed")
	}
	var bastion *link
	if len(t.Bastions) > 0 {
		// The bastion's own connect has its dial timeout and retries (a bastion still booting):
		// ctx bounds it, not this hop's DialTimeout.
		hops := t.hops()
		b, berr := p.Conn(hops[len(hops)-2]).link(ctx)
		if berr != nil {
			return nil, false, berr
		}
		bastion = b
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.DialTimeout)
	defer cancel()
	var conn net.Conn
	if bastion == nil {
		d := net.Dialer{KeepAlive: 30 * time.Second}
		conn, err = d.DialContext(ctx, "tcp", t.addr())
	} else {
		conn, err = bastion.client.DialContext(ctx, "tcp", t.addr())
	}
	if err != nil {
		return nil, transient(err), err
	}
	client, err = p.handshake(ctx, conn, t)
	if err != nil {
		return nil, transient(err), err
	}
	return client, false, nil
}

func (p *Pool) handshake(ctx context.Context, conn net.Conn, t Target) (*xssh.Client, error) {
	var keyErr error
	cfg := &xssh.ClientConfig{
		User: t.user(),
		Auth: []xssh.AuthMethod{xssh.PublicKeysCallback(func() ([]xssh.Signer, error) {
			return p.creds.signers(t)
		})},
		HostKeyCallback: func(_ string, _ net.Addr, key xssh.PublicKey) error {
			keyErr = p.keys.check(t, key)
			return keyErr
		},
		HostKeyAlgorithms: p.keys.algorithms(t),
	}
	// The handshake has no context parameter: bound it with a deadline on
	// the connection, and close the connection if ctx ends first.
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, chans, reqs, err := xssh.NewClientConn(conn, t.addr(), cfg)
	stop()
	if err != nil {
		conn.Close()
		switch {
		case keyErr != nil:
			return nil, keyErr
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("authentication as %s failed (%s): %w", t.user(), p.describeCredentials(t), err)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("SSH handshake: %w", ctx.Err())
		}
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return xssh.NewClient(c, chans, reqs), nil
}

// describeCredentials says which keys were offered, by fingerprint only.
func (p *Pool) describeCredentials(t Target) string {
	signers, err := p.creds.signers(t)
	if err != nil {
		return err.Error()
	}
	var parts []string
	for i, s := range signers {
		src := "agent"
		if i == 0 && t.PrivateKeyFile != "" {
			src = t.PrivateKeyFile
		}
		parts = append(parts, fmt.Sprintf("%s %s from %s", s.PublicKey().Type(), xssh.FingerprintSHA256(s.PublicKey()), src))
	}
	return "offered " + strings.Join(parts, ", ")
}

// transient reports whether a dial failure may go away by itself: the
// host is rebooting, sshd is restarting, or a network blip.
func transient(err error) bool {
	var he *HostKeyError
	if errors.As(err, &he) {
		return false
	}
	var oce *xssh.OpenChannelError
	if errors.As(err, &oce) {
		return oce.Reason == xssh.ConnectionFailed
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ETIMEDOUT,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
