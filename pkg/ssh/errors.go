package ssh

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConnectionLost means the connection died while a command was running:
// the command may or may not have finished on the host. The next call on
// the same Host reconnects.
var ErrConnectionLost = errors.New("connection lost")

// ErrSudoPassword means the login user's sudo asks for a password. Slipway
// runs sudo with -n and never answers prompts, so this fails fast instead
// of hanging.
var ErrSudoPassword = errors.New("sudo needs a password")

// ConnectError means a host could not be reached or refused us: dial,
// handshake, host-key or authentication failure. No command ran.
type ConnectError struct {
	Host    string // Target name
	User    string
	Address string // host:port as dialed
	// Via names the bastion this hop was dialed through, if any.
	Via string
	Err error
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connecting to %s as %s", e.Host, e.User)
	if e.Host != e.Address {
		fmt.Fprintf(&b, " (%s)", e.Address)
	}
	if e.Via != "" {
		fmt.Fprintf(&b, " through bastion %s", e.Via)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// ExitError means a command ran and failed: a non-zero exit status or a
// signal. Stderr holds the last lines the command wrote to stderr.
type ExitError struct {
	Host    string
	Command string // as sent, shell-quoted; a script shows its name
	// ExitStatus is the remote exit status, or -1 when a signal ended it.
	ExitStatus int
	Signal     string
	Stderr     string
}

// stderrTailLines bounds how much stderr an error carries: enough for the
// usual last-words of kubeadm or apt, short enough to read in a terminal.
const stderrTailLines = 10

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "running %s on %s: ", e.Command, e.Host)
	if e.Signal != "" {
		fmt.Fprintf(&b, "killed by signal %s", e.Signal)
	} else {
		fmt.Fprintf(&b, "exit status %d", e.ExitStatus)
	}
	for _, l := range tailLines(e.Stderr, stderrTailLines) {
		fmt.Fprintf(&b, "\n  stderr: %s", l)
	}
	return b.String()
}

func tailLines(s string, n int) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// hostOf returns the host a typed error of this package names, so fan-out
// does not prefix the host twice.
func hostOf(err error) string {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce.Host
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Host
	}
	var he *HostKeyError
	if errors.As(err, &he) {
		return he.Host
	}
	return ""
}
