// Package sshtest provides a recording fake of ssh.Host for unit tests,
// in the way net/http/httptest serves net/http: tests script responses by
// matching commands, run the code under test, then assert on the commands
// each host received and the files uploaded to it.
package sshtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"regexp"
	"sync"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Call is one command, script or transfer a fake host received.
type Call struct {
	// Command is Cmd.String(): the quoted command line, "script NAME" for
	// a script, "upload PATH" or "download PATH" for transfers.
	Command string
	Args    []string // nil for scripts and transfers
	Script  string   // the script body
	Env     []string
	Stdin   []byte
}

// Response is what a matched command does.
type Response struct {
	Stdout, Stderr string
	// ExitStatus non-zero makes the command fail with an *ssh.ExitError.
	ExitStatus int
	// Err, if set, is returned instead (e.g. an *ssh.ConnectError).
	Err error
	// Hold, if set, runs before the command answers, outside the host's
	// lock, with the command's context. A test uses it to keep commands in
	// flight, to see how many hosts are worked on at once. An error it
	// returns fails the command.
	Hold func(ctx context.Context) error
}

// File is an uploaded file.
type File struct {
	Data  []byte
	Mode  fs.FileMode
	Owner string
}

type rule struct {
	match func(Call) bool
	resp  Response
}

// Host is a fake ssh.Host. Unmatched commands succeed with no output.
// It is safe for concurrent use.
type Host struct {
	name string
	// Dial, if set, serves DialContext; otherwise dialing fails.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	rules []rule
	calls []Call
	files map[string]File
}

var _ ssh.Host = (*Host)(nil)

// NewHost returns a fake host named name.
func NewHost(name string) *Host {
	return &Host{name: name, files: map[string]File{}}
}

// On scripts the response of commands whose Command matches the regular
// expression re. The first matching rule wins.
func (h *Host) On(re string, r Response) *Host {
	rx := regexp.MustCompile(re)
	return h.OnFunc(func(c Call) bool { return rx.MatchString(c.Command) }, r)
}

// OnFunc scripts the response of calls for which match returns true.
func (h *Host) OnFunc(match func(Call) bool, r Response) *Host {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = append(h.rules, rule{match, r})
	return h
}

// Calls returns what the host received, in order.
func (h *Host) Calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.calls...)
}

// Commands returns the Command of every call, in order.
func (h *Host) Commands() []string {
	var out []string
	for _, c := range h.Calls() {
		out = append(out, c.Command)
	}
	return out
}

// File returns an uploaded (or SetFile'd) file.
func (h *Host) File(path string) (File, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.files[path]
	return f, ok
}

// SetFile puts a file on the host for Download.
func (h *Host) SetFile(path string, f File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = f
}

// Name is the host's name.
func (h *Host) Name() string { return h.name }

// Command prepares a recorded command.
func (h *Host) Command(ctx context.Context, name string, args ...string) *ssh.Cmd {
	return ssh.NewCommand(ctx, h.name, h.run, name, args...)
}

// Script prepares a recorded script.
func (h *Host) Script(ctx context.Context, name, script string) *ssh.Cmd {
	return ssh.NewScript(ctx, h.name, h.run, name, script)
}

func (h *Host) run(ctx context.Context, c *ssh.Cmd, stdout, stderr io.Writer) error {
	call := Call{Command: c.String(), Args: c.Args(), Env: c.Env}
	if _, body, ok := c.Script(); ok {
		call.Script = body
	}
	if c.Stdin != nil {
		data, err := io.ReadAll(c.Stdin)
		if err != nil {
			return err
		}
		call.Stdin = data
	}
	r := h.record(call)
	if r.Hold != nil {
		if err := r.Hold(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	io.WriteString(stdout, r.Stdout)
	io.WriteString(stderr, r.Stderr)
	if r.Err != nil {
		return r.Err
	}
	if r.ExitStatus != 0 {
		return &ssh.ExitError{ExitStatus: r.ExitStatus}
	}
	return nil
}

func (h *Host) record(c Call) Response {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	for _, r := range h.rules {
		if r.match(c) {
			return r.resp
		}
	}
	return Response{}
}

// Upload records the file. A rule matching "upload PATH" can fail it.
func (h *Host) Upload(ctx context.Context, src io.Reader, dst string, mode fs.FileMode, owner string) error {
	data, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	if r := h.record(Call{Command: "upload " + dst, Stdin: data}); r.Err != nil || r.ExitStatus != 0 {
		return fmt.Errorf("uploading %s to %s: %w", dst, h.name, errors.Join(r.Err, exitErr(r)))
	}
	if mode == 0 {
		mode = 0o644
	}
	h.SetFile(dst, File{Data: data, Mode: mode, Owner: owner})
	return ctx.Err()
}

// Download returns a file uploaded or set with SetFile.
func (h *Host) Download(ctx context.Context, src string, dst io.Writer) error {
	if r := h.record(Call{Command: "download " + src}); r.Err != nil || r.ExitStatus != 0 {
		return fmt.Errorf("downloading %s from %s: %w", src, h.name, errors.Join(r.Err, exitErr(r)))
	}
	f, ok := h.File(src)
	if !ok {
		return fmt.Errorf("downloading %s from %s: %w", src, h.name, fs.ErrNotExist)
	}
	_, err := io.Copy(dst, bytes.NewReader(f.Data))
	return err
}

func exitErr(r Response) error {
	if r.ExitStatus == 0 {
		return nil
	}
	return &ssh.ExitError{Host: "", ExitStatus: r.ExitStatus, Stderr: r.Stderr}
}

// DialContext calls h.Dial.
func (h *Host) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if h.Dial == nil {
		return nil, fmt.Errorf("dialing %s %s from %s: sshtest.Host has no Dial", network, addr, h.name)
	}
	return h.Dial(ctx, network, addr)
}
