package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	xssh "golang.org/x/crypto/ssh"
)

// Command prepares name with args on this host.
func (c *Conn) Command(ctx context.Context, name string, args ...string) *Cmd {
	cmd := NewCommand(ctx, c.Name(), c.run, name, args...)
	cmd.redact = c.pool.opts.Secrets.Redact
	return cmd
}

// Script prepares script for `bash -s` on this host.
func (c *Conn) Script(ctx context.Context, name, script string) *Cmd {
	cmd := NewScript(ctx, c.Name(), c.run, name, script)
	cmd.redact = c.pool.opts.Secrets.Redact
	return cmd
}

func (c *Conn) run(ctx context.Context, cmd *Cmd, stdout, stderr io.Writer) error {
	sudo, err := c.useSudo(ctx)
	if err != nil {
		return err
	}
	line, stdin := remoteCommand(cmd, sudo)
	if v := c.pool.opts.Verbose; v != nil {
		secrets := c.pool.opts.Secrets
		echo := newPrefixWriter(v, &c.pool.verboseMu, c.Name(), secrets)
		fmt.Fprintf(echo, "$ %s%s\n", envNames(cmd.Env), cmd)
		out, errw := newPrefixWriter(v, &c.pool.verboseMu, c.Name(), secrets), newPrefixWriter(v, &c.pool.verboseMu, c.Name(), secrets)
		defer out.Flush()
		defer errw.Flush()
		stdout, stderr = io.MultiWriter(stdout, out), io.MultiWriter(stderr, errw)
	}
	if err := c.exec(ctx, line, sudo, stdin, stdout, stderr); err != nil {
		return c.explain(cmd, err)
	}
	return nil
}

// explain turns errors of the wire into errors for the user.
func (c *Conn) explain(cmd *Cmd, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) || hostOf(err) != "" {
		return err
	}
	return fmt.Errorf("running %s on %s: %w", cmd, c.Name(), err)
}

// envNames shows which variables a command gets, never their values.
func envNames(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		b.WriteString(k + "=… ")
	}
	return b.String()
}

// remoteCommand returns the line for the remote login shell and what to
// send on stdin. Scripts travel over stdin, with their environment as
// export statements in front, so values never show in the process list.
// cmd has been validated by Cmd.Run.
func remoteCommand(cmd *Cmd, sudo bool) (string, io.Reader) {
	prefix := ""
	if sudo {
		prefix = "sudo -n -- "
	}
	names, values, _ := splitEnv(cmd.Env)
	if cmd.args == nil {
		var head strings.Builder
		for i, n := range names {
			fmt.Fprintf(&head, "export %s=%s\n", n, Quote(values[i]))
		}
		return prefix + "bash -s", io.MultiReader(strings.NewReader(head.String()), strings.NewReader(cmd.script))
	}
	var b strings.Builder
	b.WriteString(prefix)
	if len(names) > 0 {
		// env(1) works whatever the login shell is, unlike NAME=value.
		b.WriteString("env ")
		for i, n := range names {
			b.WriteString(n + "=" + Quote(values[i]) + " ")
		}
	}
	args, _ := quoteArgs(cmd.args)
	b.WriteString(args)
	return b.String(), cmd.Stdin
}

// exec runs one command line in a new session. sudo says whether line
// runs through sudo, which matters for stopping it: cancelling ctx kills
// the command's process group on the host (see stopRemote).
func (c *Conn) exec(ctx context.Context, line string, sudo bool, stdin io.Reader, stdout, stderr io.Writer) error {
	s, l, release, err := c.session(ctx)
	if err != nil {
		return err
	}
	defer release()
	defer s.Close()
	pw := &pidWriter{w: stdout, ready: make(chan struct{})}
	s.Stdin, s.Stdout, s.Stderr = stdin, pw, stderr
	// The login shell is a session leader (sshd calls setsid), so its PID
	// names the process group of everything the command starts. It prints
	// the PID, then execs the command in its place.
	if err := s.Start("echo $$; exec " + line); err != nil {
		return fmt.Errorf("starting the command: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		c.stopRemote(l, pw, sudo)
		s.Close()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			// The server does not answer: drop the connection so that
			// Wait returns and the output goroutines stop writing.
			c.drop(l)
			<-done
		}
		return ctx.Err()
	}
	var xe *xssh.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &xe):
		if xe.Signal() != "" {
			return &ExitError{ExitStatus: -1, Signal: xe.Signal()}
		}
		return &ExitError{ExitStatus: xe.ExitStatus()}
	case !l.alive() || isExitMissing(err) || errors.Is(err, io.EOF):
		c.drop(l)
		return fmt.Errorf("%w (the command may have been interrupted or may still be running): %v", ErrConnectionLost, err)
	}
	return err
}

// stopTimeout bounds how long a cancelled command may take to go away.
const stopTimeout = 5 * time.Second

// stopRemote sends SIGTERM to the command's process group from a second
// session. SSH "signal" requests would be simpler, but OpenSSH ignores
// them for root logins (no privilege separation after authentication),
// and closing the channel leaves a command that does not write running.
func (c *Conn) stopRemote(l *link, pw *pidWriter, sudo bool) {
	var pid int
	select {
	case <-pw.ready:
		pid = pw.pid
	case <-time.After(stopTimeout):
	}
	if pid <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	s, err := newSession(ctx, l)
	if err != nil {
		return
	}
	defer s.Close()
	kill := fmt.Sprintf("kill -TERM -- -%d 2>/dev/null || kill -TERM %d", pid, pid)
	if sudo {
		kill = "sudo -n -- sh -c " + Quote(kill)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(kill) }()
	select {
	case <-done:
	case <-time.After(stopTimeout):
	}
}

// pidWriter takes the first line of stdout, the PID the login shell
// printed, and passes the rest through.
type pidWriter struct {
	w     io.Writer
	ready chan struct{}
	head  []byte
	pid   int
	done  bool
}

func (p *pidWriter) Write(b []byte) (int, error) {
	n := len(b)
	if !p.done {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.head = append(p.head, b...)
			return n, nil
		}
		p.head = append(p.head, b[:i]...)
		p.pid, _ = strconv.Atoi(string(p.head))
		p.done = true
		close(p.ready)
		b = b[i+1:]
	}
	if len(b) == 0 {
		return n, nil
	}
	if _, err := p.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

func isExitMissing(err error) bool {
	var em *xssh.ExitMissingError
	return errors.As(err, &em)
}
