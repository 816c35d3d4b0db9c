package ssh

import (
	"cmp"
	"errors"
	"slices"
	"sync"
)

// Pool holds one cached connection per host and the settings shared by
// all of them. It is safe for concurrent use. Close it when done.
type Pool struct {
	opts  Options
	keys  *hostKeys
	creds *credentials
	// verboseMu keeps lines of parallel hosts whole on Options.Verbose.
	verboseMu sync.Mutex

	mu     sync.Mutex
	conns  map[string]*Conn
	closed bool
}

// NewPool returns a pool; it dials nothing until a Host is used.
func NewPool(opts Options) *Pool {
	opts = opts.withDefaults()
	files := append([]string(nil), opts.KnownHostsFiles...)
	if opts.ClusterKnownHostsFile != "" {
		files = append(files, opts.ClusterKnownHostsFile)
	}
	return &Pool{
		opts:  opts,
		keys:  &hostKeys{files: files, record: opts.ClusterKnownHostsFile, tofu: opts.TrustOnFirstUse},
		creds: &credentials{passphrase: opts.Passphrase},
		conns: map[string]*Conn{},
	}
}

// Hosts hands out a Host per target: a Pool, or sshtest.Fleet in tests.
type Hosts interface {
	Host(t Target) Host
}

var _ Hosts = (*Pool)(nil)

// Host returns Conn(t) as a Host.
func (p *Pool) Host(t Target) Host { return p.Conn(t) }

// Conn returns the connection for t, creating it on first use. It does
// not dial: the first command (or Connect) does, and a dead connection is
// redialed on the next use.
func (p *Pool) Conn(t Target) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := t.key()
	c, ok := p.conns[k]
	if !ok {
		c = &Conn{pool: p, target: t, slots: make(chan struct{}, maxSessions)}
		p.conns[k] = c
	}
	return c
}

// Close closes every connection, hosts before the bastions they go
// through. Hosts used after Close fail to connect.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := make([]*Conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	slices.SortFunc(conns, func(a, b *Conn) int {
		return cmp.Compare(len(b.target.Bastions), len(a.target.Bastions))
	})
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(append(errs, p.creds.close())...)
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
