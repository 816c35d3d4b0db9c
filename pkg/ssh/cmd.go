package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// RunFunc executes a prepared Cmd on behalf of a Host. It writes the
// command's output to stdout and stderr (never nil) and reports a non-zero
// exit as an *ExitError carrying at least ExitStatus or Signal; Cmd.Run
// fills in the host, the command and the stderr tail. Conn and
// sshtest.Host are the RunFuncs in this repository.
type RunFunc func(ctx context.Context, c *Cmd, stdout, stderr io.Writer) error

// Cmd is a command or script prepared for one host, used like os/exec.Cmd.
// Arguments are quoted by this package, never interpreted by the remote
// shell. Values in Env travel on the remote command line for commands
// (visible in the host's process list) and over stdin for scripts, so pass
// secrets to scripts or through Stdin, not as arguments.
type Cmd struct {
	// Env holds extra KEY=value entries for the remote command; names
	// must match [A-Za-z_][A-Za-z0-9_]*.
	Env []string
	// Stdin is sent to the command; nil means empty. A script's stdin
	// carries the script itself, so Stdin must stay nil for scripts.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	ctx    context.Context
	host   string
	run    RunFunc
	args   []string
	name   string // script name
	script string
	ran    bool
	// redact hides secrets in what errors show; set by the Host that made the Cmd.
	redact func(string) string
}

// NewCommand prepares name with args on host. Hosts call it; callers use
// Host.Command.
func NewCommand(ctx context.Context, host string, run RunFunc, name string, args ...string) *Cmd {
	return &Cmd{ctx: ctx, host: host, run: run, args: append([]string{name}, args...)}
}

// NewScript prepares a shell script for `bash -s` on host. name labels it
// in errors and verbose output. Hosts call it; callers use Host.Script.
func NewScript(ctx context.Context, host string, run RunFunc, name, script string) *Cmd {
	return &Cmd{ctx: ctx, host: host, run: run, name: name, script: script}
}

// Host is the name of the host the command runs on.
func (c *Cmd) Host() string { return c.host }

// Args returns the command and its arguments, or nil for a script.
func (c *Cmd) Args() []string { return c.args }

// Script returns the script's name and body; ok is false for a command.
func (c *Cmd) Script() (name, body string, ok bool) {
	return c.name, c.script, c.args == nil
}

// String is the command line as the remote shell receives it (without
// sudo and Env), or "script NAME" for a script.
func (c *Cmd) String() string {
	if c.args == nil {
		return "script " + Quote(c.name)
	}
	s, err := quoteArgs(c.args)
	if err != nil {
		return fmt.Sprintf("%q", c.args)
	}
	return s
}

// Run runs the command and waits for it. A non-zero exit returns an
// *ExitError; failing to connect returns a *ConnectError.
func (c *Cmd) Run() error {
	if c.ran {
		return errors.New("ssh: Cmd already ran")
	}
	c.ran = true
	if err := c.check(); err != nil {
		return fmt.Errorf("running %s on %s: %w", c, c.host, err)
	}
	tail := &tailBuffer{max: 8 << 10}
	stdout := c.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	stderr := io.Writer(tail)
	if c.Stderr != nil {
		stderr = io.MultiWriter(c.Stderr, tail)
	}
	err := c.run(c.ctx, c, stdout, stderr)
	var ee *ExitError
	if errors.As(err, &ee) {
		ee.Host, ee.Command = c.host, c.String()
		if ee.Stderr == "" {
			ee.Stderr = tail.String()
		}
		if c.redact != nil {
			ee.Command, ee.Stderr = c.redact(ee.Command), c.redact(ee.Stderr)
		}
	}
	return err
}

func (c *Cmd) check() error {
	_, _, err := splitEnv(c.Env)
	if c.args != nil {
		_, qerr := quoteArgs(c.args)
		err = errors.Join(err, qerr)
	} else if c.Stdin != nil {
		err = errors.Join(err, errors.New("a script cannot have Stdin: stdin carries the script"))
	}
	return err
}

// MaxOutput bounds what Output and CombinedOutput collect: a host's answer is input from
// outside, and a broken or hostile one must not grow slipway without end.
const MaxOutput = 16 << 20

// Output runs the command and returns its stdout, at most MaxOutput bytes of it.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("ssh: Stdout already set")
	}
	out := c.outputWriter()
	c.Stdout = out
	return c.collect(out)
}

// CombinedOutput runs the command and returns stdout and stderr together, at most MaxOutput
// bytes of them.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("ssh: Stdout or Stderr already set")
	}
	out := c.outputWriter()
	c.Stdout, c.Stderr = out, out
	return c.collect(out)
}

func (c *Cmd) outputWriter() *bounded.Writer {
	return &bounded.Writer{What: fmt.Sprintf("the output of %s on %s", c, c.host), Max: MaxOutput}
}

// collect runs the command into out; once out is full, the command is stopped, as a
// cancelled one is.
func (c *Cmd) collect(out *bounded.Writer) ([]byte, error) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.ctx, out.OnOverflow = ctx, cancel
	err := c.Run()
	if tooLarge := out.Err(); tooLarge != nil {
		return nil, tooLarge
	}
	return out.Bytes(), err
}
