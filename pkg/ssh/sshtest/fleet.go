package sshtest

import (
	"sync"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Fleet hands out a fake Host per target name, like ssh.Pool hands out
// connections. Setup, if set, runs once on every new host (to add rules
// common to all hosts).
type Fleet struct {
	Setup func(*Host)

	mu    sync.Mutex
	hosts map[string]*Host
}

var _ ssh.Hosts = (*Fleet)(nil)

// Host returns the fake for t, creating it on first use.
func (f *Fleet) Host(t ssh.Target) ssh.Host { return f.Get(t.String()) }

// Get returns the fake host named name, creating it on first use.
func (f *Fleet) Get(name string) *Host {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hosts == nil {
		f.hosts = map[string]*Host{}
	}
	h, ok := f.hosts[name]
	if !ok {
		h = NewHost(name)
		if f.Setup != nil {
			f.Setup(h)
		}
		f.hosts[name] = h
	}
	return h
}
