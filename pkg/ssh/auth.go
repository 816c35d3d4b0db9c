package ssh

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// maxKeyFileBytes bounds private key and certificate files: an RSA key of 16384 bits, the
// largest OpenSSH makes, is about 13 KiB in PEM.
const maxKeyFileBytes = 256 << 10

// credentials loads signers for targets and caches them per pool, so an
// encrypted key asks for its passphrase once, not once per host of a
// fan-out, and agents are dialed once per socket.
type credentials struct {
	passphrase PassphraseFunc

	mu     sync.Mutex
	keys   map[string]keyFile // by private key path
	agents map[string]agent.ExtendedAgent
	closer []net.Conn
}

// keyFile is a parsed key file: signer is nil while the key is encrypted
// and not yet needed; public is known either way (OpenSSH-format files
// store it in the clear).
type keyFile struct {
	signer xssh.Signer
	public xssh.PublicKey
}

// signers returns, in the order to try them: the configured key (from the
// file, or from the agent when the agent holds it, which avoids a
// passphrase prompt), wrapped with its certificate when there is one, then
// the agent's other keys.
func (c *credentials) signers(t Target) ([]xssh.Signer, error) {
	// A stale $SSH_AUTH_SOCK (an agent from a closed session) must not
	// break authentication with a key file; a configured socket must work.
	ag, agentErr := c.agent(t.AgentSocket)
	if agentErr != nil && t.AgentSocket != "" {
		return nil, agentErr
	}
	var err error
	var agentSigners []xssh.Signer
	if ag != nil {
		if agentSigners, err = ag.Signers(); err != nil {
			return nil, fmt.Errorf("listing ssh-agent keys: %w", err)
		}
	}
	if t.PrivateKeyFile == "" {
		if agentErr != nil {
			return nil, fmt.Errorf("no private key file is configured and %w", agentErr)
		}
		if len(agentSigners) == 0 {
			return nil, errors.New("no private key file is configured and no ssh-agent key is available (is SSH_AUTH_SOCK set?)")
		}
		return agentSigners, nil
	}
	primary, err := c.key(t.PrivateKeyFile, agentSigners)
	if err != nil {
		return nil, err
	}
	if primary, err = withCertificate(primary, t); err != nil {
		return nil, err
	}
	out := []xssh.Signer{primary}
	for _, s := range agentSigners {
		if !samePublic(s.PublicKey(), primary.PublicKey()) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (c *credentials) key(path string, agentSigners []xssh.Signer) (xssh.Signer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[path]
	if !ok {
		pem, err := bounded.ReadFile(path, maxKeyFileBytes)
		if err != nil {
			return nil, fmt.Errorf("reading private key: %w", err)
		}
		s, err := xssh.ParsePrivateKey(pem)
		var missing *xssh.PassphraseMissingError
		switch {
		case err == nil:
			k = keyFile{signer: s, public: s.PublicKey()}
		case errors.As(err, &missing):
			k = keyFile{public: missing.PublicKey}
		default:
			return nil, fmt.Errorf("parsing private key %s: %w", path, err)
		}
		if c.keys == nil {
			c.keys = map[string]keyFile{}
		}
		c.keys[path] = k
	}
	if k.signer != nil {
		return k.signer, nil
	}
	for _, s := range agentSigners {
		if k.public != nil && samePublic(s.PublicKey(), k.public) {
			return s, nil
		}
	}
	s, err := c.decrypt(path)
	if err != nil {
		return nil, err
	}
	c.keys[path] = keyFile{signer: s, public: s.PublicKey()}
	return s, nil
}

func (c *credentials) decrypt(path string) (xssh.Signer, error) {
	pem, err := bounded.ReadFile(path, maxKeyFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading private key: %w", err)
	}
	ask := c.passphrase
	if ask == nil {
		ask = DefaultPassphrase
	}
	pass, err := ask(path)
	if err != nil {
		return nil, err
	}
	s, err := xssh.ParsePrivateKeyWithPassphrase(pem, pass)
	clear(pass)
	if err != nil {
		return nil, fmt.Errorf("decrypting private key %s: %w", path, err)
	}
	return s, nil
}

func withCertificate(s xssh.Signer, t Target) (xssh.Signer, error) {
	path := t.CertificateFile
	if path == "" {
		path = t.PrivateKeyFile + "-cert.pub"
		if _, err := os.Stat(path); err != nil {
			return s, nil
		}
	}
	data, err := bounded.ReadFile(path, maxKeyFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading certificate: %w", err)
	}
	pub, _, _, _, err := xssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate %s: %w", path, err)
	}
	cert, ok := pub.(*xssh.Certificate)
	if !ok {
		return nil, fmt.Errorf("%s is a public key, not a certificate", path)
	}
	cs, err := xssh.NewCertSigner(cert, s)
	if err != nil {
		return nil, fmt.Errorf("using certificate %s: %w", path, err)
	}
	return cs, nil
}

func (c *credentials) agent(socket string) (agent.ExtendedAgent, error) {
	if socket == "" {
		socket = os.Getenv("SSH_AUTH_SOCK")
	}
	if socket == "" {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.agents[socket]; ok {
		return a, nil
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connecting to ssh-agent at %s: %w", socket, err)
	}
	a := agent.NewClient(conn)
	if c.agents == nil {
		c.agents = map[string]agent.ExtendedAgent{}
	}
	c.agents[socket] = a
	c.closer = append(c.closer, conn)
	return a, nil
}

func (c *credentials) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, conn := range c.closer {
		errs = append(errs, conn.Close())
	}
	c.closer, c.agents = nil, nil
	return errors.Join(errs...)
}

func samePublic(a, b xssh.PublicKey) bool {
	if ca, ok := a.(*xssh.Certificate); ok {
		a = ca.Key
	}
	if cb, ok := b.(*xssh.Certificate); ok {
		b = cb.Key
	}
	return string(a.Marshal()) == string(b.Marshal())
}
