package ssh

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPort and DefaultUser apply when a Target leaves them empty.
const (
	DefaultPort = 22
	DefaultUser = "root"
)

// Target describes how to reach one host. The CLI layer maps manifest hosts
// onto it, so this package does not depend on the manifest API.
type Target struct {
	// Name identifies the host in errors, progress and verbose output.
	// Empty means Address.
	Name string
	// Address is the host name or IP address, as reachable from the last
	// bastion (or from this machine when there is none).
	Address string
	// Port is the SSH port; 0 means 22.
	Port int
	// User is the login user; empty means root. A non-root user runs
	// commands through `sudo -n` unless the pool's SudoPolicy says otherwise.
	User string
	// PrivateKeyFile is the key to authenticate with. When set, it is tried
	// before any agent key, so a large agent cannot exhaust the server's
	// MaxAuthTries. Passphrase-protected keys ask the pool's PassphraseFunc.
	PrivateKeyFile string
	// CertificateFile is an OpenSSH user certificate for PrivateKeyFile (or
	// for the matching agent key). Empty means PrivateKeyFile+"-cert.pub"
	// when that file exists, as OpenSSH does.
	CertificateFile string
	// AgentSocket is the ssh-agent socket; empty means $SSH_AUTH_SOCK.
	AgentSocket string
	// HostPublicKey pins the host key, in authorized_keys format
	// ("ssh-ed25519 AAAA..."). A pinned key wins over known_hosts files.
	HostPublicKey string
	// Bastions is the ProxyJump chain, outermost first: this machine dials
	// Bastions[0], which dials Bastions[1], ..., which dials Address. Each
	// bastion has its own user, key and port; bastions' own Bastions fields
	// are ignored.
	Bastions []Target
}

func (t Target) String() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Address
}

func (t Target) port() int {
	if t.Port == 0 {
		return DefaultPort
	}
	return t.Port
}

func (t Target) user() string {
	if t.User == "" {
		return DefaultUser
	}
	return t.User
}

// addr is host:port as dialed and as looked up in known_hosts.
func (t Target) addr() string {
	return net.JoinHostPort(t.Address, strconv.Itoa(t.port()))
}

// hops returns the chain of targets to dial, outermost first, ending with t.
// Each hop carries the bastions in front of it, so it is cached under its
// own key and shared by every host behind it.
func (t Target) hops() []Target {
	out := make([]Target, 0, len(t.Bastions)+1)
	for i, b := range t.Bastions {
		b.Bastions = append([]Target(nil), t.Bastions[:i]...)
		out = append(out, b)
	}
	return append(out, t)
}

// key identifies a connection: the same name, user, address and route
// share one. The name is part of it so errors always name the host asked
// for, even if two manifest hosts share an address.
func (t Target) key() string {
	var b strings.Builder
	for _, h := range t.Bastions {
		fmt.Fprintf(&b, "%s=%s@%s>", h, h.user(), h.addr())
	}
	fmt.Fprintf(&b, "%s=%s@%s", t, t.user(), t.addr())
	return b.String()
}

func (t Target) validate() error {
	var errs []error
	if t.Address == "" {
		errs = append(errs, errors.New("address is empty"))
	}
	if t.Port < 0 || t.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is out of range", t.Port))
	}
	for i, b := range t.Bastions {
		if err := b.validate(); err != nil {
			errs = append(errs, fmt.Errorf("bastion %d (%s): %w", i, b, err))
		}
	}
	return errors.Join(errs...)
}
