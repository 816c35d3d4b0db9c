package ssh_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// TestSecretsHidden: a command that prints a secret (as kubeadm prints the token it was given)
// shows it neither in the verbose output nor in its error; its stdout, which the caller asked
// for, is untouched.
func TestSecretsHidden(t *testing.T) {
	var verbose bytes.Buffer
	secrets := &ssh.Secrets{}
	e := newEnv(t, sshd.Config{}, ssh.Options{Verbose: &verbose, Secrets: secrets})
	secrets.Add("abcdef.0123456789abcdef")
	ctx := ctxFor(t, time.Minute)
	cmd := e.host("root").Script(ctx, "join", "echo using token abcdef.0123456789abcdef\necho bad token abcdef.0123456789abcdef >&2\nexit 1\n")
	out, err := cmd.Output()
	if err == nil || !strings.Contains(err.Error(), "stderr: bad token [redacted]") {
		t.Fatalf("err = %v, want the stderr tail with the token redacted", err)
	}
	if string(out) != "using token abcdef.0123456789abcdef\n" {
		t.Errorf("stdout = %q", out)
	}
	if strings.Contains(verbose.String()+err.Error(), "0123456789abcdef") || !strings.Contains(verbose.String(), "[node-1] using token [redacted]") {
		t.Errorf("verbose output or error shows the secret:\n%s\n%v", verbose.String(), err)
	}
}

// TestOutputBounded: what Output collects of a host's answer is bounded, so a host that
// answers without end is an error, not a slipway that grows until it is killed.
func TestOutputBounded(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	ctx := ctxFor(t, time.Minute)
	out, err := e.host("root").Command(ctx, "cat", "/dev/zero").Output()
	if err == nil || !strings.Contains(err.Error(), "the output of cat /dev/zero on node-1 is larger than 16 MiB") || out != nil {
		t.Fatalf("Output of cat /dev/zero = %d bytes, %v", len(out), err)
	}
	out, err = e.host("root").Command(ctx, "sh", "-c", "head -c 1000 /dev/zero; head -c 1000 /dev/zero >&2").CombinedOutput()
	if err != nil || len(out) != 2000 {
		t.Fatalf("CombinedOutput = %d bytes, %v", len(out), err)
	}
}

func TestExec(t *testing.T) {
	var verbose bytes.Buffer
	e := newEnv(t, sshd.Config{}, ssh.Options{Verbose: &verbose})
	h := e.host("root")
	ctx := ctxFor(t, time.Minute)

	tests := []struct {
		name       string
		cmd        func() *ssh.Cmd
		wantStdout string
		wantErr    string // substring of the error; empty means success
		wantStatus int
	}{
		{name: "stdout", cmd: func() *ssh.Cmd { return h.Command(ctx, "echo", "hello", "world") }, wantStdout: "hello world\n"},
		{
			name: "arguments are quoted, not interpreted",
			cmd: func() *ssh.Cmd {
				return h.Command(ctx, "printf", "%s|", "$(id -u)", "a b", "it's", "*", "line\nbreak", "")
			},
			wantStdout: "$(id -u)|a b|it's|*|line\nbreak||",
		},
		{
			name: "env for a command",
			cmd: func() *ssh.Cmd {
				c := h.Command(ctx, "sh", "-c", `printf '%s' "$GREETING"`)
				c.Env = []string{"GREETING=hi; rm -rf / 'x'"}
				return c
			},
			wantStdout: "hi; rm -rf / 'x'",
		},
		{
			name: "script with env over stdin",
			cmd: func() *ssh.Cmd {
				c := h.Script(ctx, "greet", "set -euo pipefail\necho \"$A-$B\"\necho err >&2\n")
				c.Env = []string{"A=1", "B=two words"}
				return c
			},
			wantStdout: "1-two words\n",
		},
		{
			name: "stdin",
			cmd: func() *ssh.Cmd {
				c := h.Command(ctx, "tr", "a-z", "A-Z")
				c.Stdin = strings.NewReader("shout")
				return c
			},
			wantStdout: "SHOUT",
		},
		{
			name:       "exit status and stderr tail",
			cmd:        func() *ssh.Cmd { return h.Command(ctx, "sh", "-c", "echo first >&2; echo last words >&2; exit 3") },
			wantErr:    "running sh -c 'echo first >&2; echo last words >&2; exit 3' on node-1: exit status 3\n  stderr: first\n  stderr: last words",
			wantStatus: 3,
		},
		{
			name:       "failing script names the script",
			cmd:        func() *ssh.Cmd { return h.Script(ctx, "install-containerd", "echo no such package >&2\nexit 100\n") },
			wantErr:    "running script install-containerd on node-1: exit status 100\n  stderr: no such package",
			wantStatus: 100,
		},
		{
			name: "invalid env name is rejected before anything runs",
			cmd: func() *ssh.Cmd {
				c := h.Command(ctx, "true")
				c.Env = []string{"BAD-NAME=x"}
				return c
			},
			wantErr: `environment variable name "BAD-NAME" is invalid`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.cmd().Output()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if string(out) != tt.wantStdout {
					t.Fatalf("stdout = %q, want %q", out, tt.wantStdout)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			var ee *ssh.ExitError
			if tt.wantStatus != 0 && (!errors.As(err, &ee) || ee.ExitStatus != tt.wantStatus || ee.Host != "node-1") {
				t.Fatalf("error %#v is not an ExitError with status %d on node-1", err, tt.wantStatus)
			}
		})
	}
	// stdout and stderr are separate streams: their relative order is not
	// fixed, only each line's integrity.
	if v := verbose.String(); !strings.Contains(v, "[node-1] $ A=… B=… script greet\n") ||
		!strings.Contains(v, "\n[node-1] 1-two words\n") || !strings.Contains(v, "\n[node-1] err\n") ||
		!strings.Contains(v, "[node-1] $(id -u)|a b|it's|*|line\n[node-1] break||\n") || strings.Contains(v, "B=two") || strings.Contains(v, "GREETING=hi") {
		t.Errorf("verbose output lacks prefixed lines or shows env values:\n%s", verbose.String())
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	h := e.host("root")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Command(ctx, "sleep", "31337").Run()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	// The connection survives a cancelled command, and the command is gone
	// (pgrep exits 1 when nothing matches).
	out, err := h.Command(ctxFor(t, time.Minute), "pgrep", "-f", "sleep 31337").Output()
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus != 1 {
		t.Fatalf("after cancel, pgrep: %q, %v; want exit status 1 (no such process)", out, err)
	}
}
