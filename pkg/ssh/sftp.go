package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pkg/sftp"
)

// sftpServers are where distributions install OpenSSH's sftp-server
// (Debian/Ubuntu, RHEL/Fedora, Arch/Alpine, others). Under sudo the
// subsystem cannot be used, so the server is started as a root command.
const sftpServers = "/usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server /usr/lib/ssh/sftp-server /usr/libexec/sftp-server"

// errNoSFTP makes transfers fall back to cat.
var errNoSFTP = errors.New("SFTP is not available")

// sftpClient returns the connection's SFTP client, starting it on first
// use: the sftp subsystem when commands run as the login user, or
// sftp-server under `sudo -n` when they run through sudo, so that files
// land directly in root-owned directories without a second copy.
// It returns errNoSFTP when neither is offered.
func (c *Conn) sftpClient(ctx context.Context, sudo bool) (*sftp.Client, *link, error) {
	l, err := c.link(ctx)
	if err != nil {
		return nil, nil, err
	}
	l.sftpMu.Lock()
	defer l.sftpMu.Unlock()
	if l.sftp != nil || l.sftpErr != nil {
		return l.sftp, l, l.sftpErr
	}
	s, err := newSession(ctx, l)
	if err != nil {
		return nil, l, fmt.Errorf("opening an SFTP session: %w", err)
	}
	w, err := s.StdinPipe()
	if err != nil {
		return nil, l, err
	}
	r, err := s.StdoutPipe()
	if err != nil {
		return nil, l, err
	}
	if sudo {
		err = s.Start("sudo -n -- sh -c " + Quote("for p in "+sftpServers+`; do [ -x "$p" ] && exec "$p"; done; exit 127`))
	} else {
		err = s.RequestSubsystem("sftp")
	}
	if err == nil {
		l.sftp, err = sftp.NewClientPipe(r, w, sftp.UseConcurrentWrites(true), sftp.MaxConcurrentRequestsPerFile(64))
	}
	if err != nil {
		s.Close()
		if !l.alive() {
			return nil, l, fmt.Errorf("starting SFTP: %w: %v", ErrConnectionLost, err)
		}
		l.sftpErr = fmt.Errorf("%w: %v", errNoSFTP, err)
		return nil, l, l.sftpErr
	}
	return l.sftp, l, nil
}

// shell runs script with sh -c, through sudo when asked, and reports a
// failure as an ExitError labelled with label.
func (c *Conn) shell(ctx context.Context, label, script string, sudo bool, stdin io.Reader, stdout io.Writer) error {
	line := "sh -c " + Quote(script)
	if sudo {
		line = "sudo -n -- " + line
	}
	if stdout == nil {
		stdout = io.Discard
	}
	tail := &tailBuffer{max: 4 << 10}
	err := c.exec(ctx, line, sudo, stdin, stdout, tail)
	var ee *ExitError
	if errors.As(err, &ee) {
		ee.Host, ee.Command, ee.Stderr = c.Name(), label, tail.String()
	}
	return err
}
