package ssh_test

import (
	"context"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// env is one sshd with a user key authorized, and a pool that trusts
// nothing but pinned keys (no user known_hosts leaks into tests).
type env struct {
	key    sshd.Key
	server *sshd.Server
	pool   *ssh.Pool
}

func newEnv(t testing.TB, cfg sshd.Config, opts ssh.Options) *env {
	t.Helper()
	sshd.Require(t)
	key := sshd.NewKey(t, sshd.TempDir(t), "id_ed25519", "")
	cfg.AuthorizedKeys = append(cfg.AuthorizedKeys, key)
	s := sshd.Start(t, cfg)
	return &env{key: key, server: s, pool: newPool(t, opts)}
}

func newPool(t testing.TB, opts ssh.Options) *ssh.Pool {
	if opts.KnownHostsFiles == nil {
		opts.KnownHostsFiles = []string{}
	}
	p := ssh.NewPool(opts)
	t.Cleanup(func() { p.Close() })
	return p
}

func (e *env) host(user string) *ssh.Conn {
	return e.pool.Conn(e.server.Target("node-1", user, e.key))
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
