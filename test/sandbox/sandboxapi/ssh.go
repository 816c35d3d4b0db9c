package sandboxapi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Signer loads the sandbox's SSH user key.
func (sb *Sandbox) Signer() (ssh.Signer, error) {
	data, err := os.ReadFile(sb.Path(KeyFile))
	if err != nil {
		return nil, err
	}
	return ssh.ParsePrivateKey(data)
}

// Dial opens an SSH connection to a host as root, accepting only the host key recorded for it.
func (sb *Sandbox) Dial(ctx context.Context, h Host, signer ssh.Signer) (*ssh.Client, error) {
	if h.HostKey == "" {
		return nil, fmt.Errorf("host %s runs no sshd", h.Name)
	}
	want, _, _, _, err := ssh.ParseAuthorizedKey([]byte(h.HostKey))
	if err != nil {
		return nil, fmt.Errorf("host key of %s: %w", h.Name, err)
	}
	cfg := &ssh.ClientConfig{
		User:            "root",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(want),
		Timeout:         5 * time.Second,
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(h.IP, "22"))
	if err != nil {
		return nil, err
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, h.IP+":22", cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ssh to %s (%s): %w", h.Name, h.IP, err)
	}
	return ssh.NewClient(c, chans, reqs), nil
}

// Run runs a shell command on a host over SSH and returns its stdout. A failure reports the
// host, the exit status and the tail of stderr.
func (sb *Sandbox) Run(ctx context.Context, h Host, command string) (string, error) {
	signer, err := sb.Signer()
	if err != nil {
		return "", err
	}
	c, err := sb.Dial(ctx, h, signer)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return run(ctx, c, h, command, nil)
}

func run(ctx context.Context, c *ssh.Client, h Host, command string, stdin []byte) (string, error) {
	s, err := c.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	if stdin != nil {
		s.Stdin = bytes.NewReader(stdin)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(command) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		c.Close()
		return "", fmt.Errorf("running %q on %s: %w", firstLine(command), h.Name, ctx.Err())
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("running %q on %s: %w: %s", firstLine(command), h.Name, err, tail(stderr.Bytes()))
	}
	return stdout.String(), nil
}

// RunScript runs a shell script on a host (bash -s, script on stdin, args after it).
func (sb *Sandbox) RunScript(ctx context.Context, h Host, script string, args ...string) (string, error) {
	signer, err := sb.Signer()
	if err != nil {
		return "", err
	}
	c, err := sb.Dial(ctx, h, signer)
	if err != nil {
		return "", err
	}
	defer c.Close()
	cmd := "bash -s --"
	for _, a := range args {
		cmd += " " + shellQuote(a)
	}
	return run(ctx, c, h, cmd, []byte(script))
}

// shellQuote quotes a value for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
