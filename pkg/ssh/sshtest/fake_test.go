package sshtest_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

func TestHost(t *testing.T) {
	ctx := context.Background()
	h := sshtest.NewHost("cp-1").
		On(`^cat /etc/os-release$`, sshtest.Response{Stdout: "ID=debian\n"}).
		On(`^script install-containerd$`, sshtest.Response{Stderr: "E: no package\n", ExitStatus: 100})

	out, err := h.Command(ctx, "cat", "/etc/os-release").Output()
	if err != nil || string(out) != "ID=debian\n" {
		t.Fatalf("os-release: %q, %v", out, err)
	}
	s := h.Script(ctx, "install-containerd", "apt-get install -y containerd\n")
	s.Env = []string{"VERSION=1.6"}
	err = s.Run()
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.Host != "cp-1" || ee.ExitStatus != 100 ||
		err.Error() != "running script install-containerd on cp-1: exit status 100\n  stderr: E: no package" {
		t.Fatalf("script error: %v", err)
	}
	if err := h.Upload(ctx, strings.NewReader("data"), "/etc/x", 0o600, "root"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := h.Download(ctx, "/etc/x", &buf); err != nil || buf.String() != "data" {
		t.Fatalf("download: %q, %v", buf.String(), err)
	}
	if f, _ := h.File("/etc/x"); f.Mode != 0o600 || f.Owner != "root" {
		t.Fatalf("file: %+v", f)
	}
	calls := h.Calls()
	want := []string{"cat /etc/os-release", "script install-containerd", "upload /etc/x", "download /etc/x"}
	if got := h.Commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commands %q, want %q", got, want)
	}
	if calls[1].Script != "apt-get install -y containerd\n" || calls[1].Env[0] != "VERSION=1.6" {
		t.Fatalf("script call: %+v", calls[1])
	}
	// Invalid input fails the same way as on a real host.
	bad := h.Command(ctx, "true")
	bad.Env = []string{"NOT VALID=1"}
	if err := bad.Run(); err == nil || len(h.Calls()) != 4 {
		t.Fatalf("invalid env: %v, %d calls", err, len(h.Calls()))
	}
}

func TestHoldKeepsACommandInFlight(t *testing.T) {
	release := make(chan struct{})
	held := make(chan struct{})
	h := sshtest.NewHost("w-1").On(`^sleep`, sshtest.Response{Stdout: "done\n", Hold: func(ctx context.Context) error {
		close(held)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	out := make(chan string, 1)
	go func() {
		b, _ := h.Command(context.Background(), "sleep", "1").Output()
		out <- string(b)
	}()
	<-held
	// The held command does not block the host: others run meanwhile.
	if err := h.Command(context.Background(), "true").Run(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-out:
		t.Fatalf("the held command answered %q before it was released", got)
	default:
	}
	close(release)
	if got := <-out; got != "done\n" {
		t.Fatalf("released command printed %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h2 := sshtest.NewHost("w-2").On(`^sleep`, sshtest.Response{Hold: func(ctx context.Context) error { return ctx.Err() }})
	if err := h2.Command(ctx, "sleep", "1").Run(); !errors.Is(err, context.Canceled) {
		t.Fatalf("a hold that fails must fail the command: %v", err)
	}
}
