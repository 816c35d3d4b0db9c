package ssh

import (
	"io"
	"os"
	"path/filepath"
	"time"
)

// SudoPolicy says how commands get root.
type SudoPolicy int

const (
	// SudoAuto runs commands through `sudo -n` when the login user is not
	// root, and directly as root otherwise.
	SudoAuto SudoPolicy = iota
	// SudoNever runs every command as the login user.
	SudoNever
)

// Defaults for Options fields left zero.
const (
	DefaultDialTimeout    = 10 * time.Second
	DefaultKeepAlive      = 15 * time.Second
	DefaultConnectTimeout = 2 * time.Minute
)

// Options configures a Pool. The zero value verifies host keys against
// ~/.ssh/known_hosts and refuses unknown hosts.
type Options struct {
	// KnownHostsFiles are the user's known_hosts files. nil means
	// ~/.ssh/known_hosts; an empty non-nil slice means none. Missing files
	// are skipped.
	KnownHostsFiles []string
	// ClusterKnownHostsFile is the per-cluster known_hosts file slipway
	// maintains. It is consulted like KnownHostsFiles, and trust on first
	// use records new keys in it.
	ClusterKnownHostsFile string
	// TrustOnFirstUse accepts an unknown host's key and records it in
	// ClusterKnownHostsFile (which must then be set). A key that differs
	// from a recorded or pinned one is refused regardless.
	TrustOnFirstUse bool
	// DialTimeout bounds the TCP dial plus the SSH handshake of one hop.
	DialTimeout time.Duration
	// KeepAlive is the interval of keepalive@openssh.com requests; a
	// connection that misses three in a row is closed and redialed on next
	// use. Negative disables keepalives.
	KeepAlive time.Duration
	// ConnectTimeout is how long a transient dial failure (refused, reset,
	// timed out: a server still booting, sshd restarting) is retried, with
	// exponential backoff up to 4 s, before the host counts as unreachable.
	// A server Terraform has just created is ACTIVE before its sshd answers;
	// this is the time it gets. The first attempt always runs; the context
	// can end the wait sooner.
	ConnectTimeout time.Duration
	// Passphrase decrypts passphrase-protected keys; nil means
	// DefaultPassphrase ($SLIPWAY_SSH_PASSPHRASE, then a TTY prompt).
	Passphrase PassphraseFunc
	// Verbose, when set, receives every command line and the live remote
	// output of every command, each line prefixed with "[host] ".
	Verbose io.Writer
	// Notices, when set, receives one line, prefixed with "[host] ", when a host's SSH is
	// retried (a server still booting), so that a long wait is not a silent one. Nil means
	// Verbose.
	Notices io.Writer
	// Sudo says how commands get root.
	Sudo SudoPolicy
	// Secrets are hidden wherever a command's line or output is shown: in Verbose and in
	// errors. Nil hides nothing.
	Secrets *Secrets
}

func (o Options) withDefaults() Options {
	if o.KnownHostsFiles == nil {
		if home, err := os.UserHomeDir(); err == nil {
			o.KnownHostsFiles = []string{filepath.Join(home, ".ssh", "known_hosts")}
		}
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	return o
}
