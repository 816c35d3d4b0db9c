package ssh_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

func TestSudo(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	sshd.EnsureUsers(t)
	ctx := ctxFor(t, time.Minute)

	t.Run("passwordless sudo runs as root", func(t *testing.T) {
		h := e.host(sshd.SudoUser)
		c := h.Command(ctx, "sh", "-c", `printf '%s %s' "$(id -un)" "$WHO"`)
		c.Env = []string{"WHO=x y"}
		out, err := c.Output()
		if err != nil || string(out) != "root x y" {
			t.Fatalf("got %q, %v; want \"root x y\"", out, err)
		}
		s := h.Script(ctx, "whoami", "id -un; echo \"$V\"")
		s.Env = []string{"V=from env"}
		if out, err := s.Output(); err != nil || string(out) != "root\nfrom env\n" {
			t.Fatalf("script: %q, %v", out, err)
		}
	})
	t.Run("SudoNever runs as the login user", func(t *testing.T) {
		p := newPool(t, ssh.Options{Sudo: ssh.SudoNever})
		out, err := p.Host(e.server.Target("node-1", sshd.SudoUser, e.key)).Command(ctx, "id", "-un").Output()
		if err != nil || string(out) != sshd.SudoUser+"\n" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("sudo that needs a password fails fast", func(t *testing.T) {
		h := e.host(sshd.PasswordUser)
		start := time.Now()
		err := h.Command(ctxFor(t, 30*time.Second), "id", "-u").Run()
		if !errors.Is(err, ssh.ErrSudoPassword) {
			t.Fatalf("err = %v, want ErrSudoPassword", err)
		}
		for _, want := range []string{"on node-1", "user " + sshd.PasswordUser, "sudo: a password is required", sshd.PasswordUser + " ALL=(ALL) NOPASSWD: ALL"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q", want)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		t.Logf("user sees: %v", err)
	})
	t.Run("upload to a root-owned path through sudo", func(t *testing.T) {
		h := e.host(sshd.SudoUser)
		dst := "/etc/slipway-sudo-upload-test.conf"
		t.Cleanup(func() { e.host("root").Command(ctx, "rm", "-f", dst).Run() })
		if err := h.Upload(ctx, strings.NewReader("secret=1\n"), dst, 0o600, "root:root"); err != nil {
			t.Fatal(err)
		}
		out, err := e.host("root").Command(ctx, "stat", "-c", "%a %U:%G %s", dst).Output()
		if err != nil || string(out) != "600 root:root 9\n" {
			t.Fatalf("stat: %q, %v", out, err)
		}
		var back bytes.Buffer
		if err := h.Download(ctx, dst, &back); err != nil || back.String() != "secret=1\n" {
			t.Fatalf("download: %q, %v", back.String(), err)
		}
	})
}
