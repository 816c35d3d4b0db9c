package sshd

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// StartAgent runs OpenSSH's ssh-agent with keys loaded and returns its
// socket. The agent is killed at cleanup.
func StartAgent(t testing.TB, keys ...Key) string {
	t.Helper()
	sock := filepath.Join(TempDir(t), "agent.sock")
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		skipOrFail(t, "starting ssh-agent: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ssh-agent did not create %s within 5s", sock)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, k := range keys {
		add := exec.Command("ssh-add", "-q", k.File)
		add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if k.Passphrase != "" {
			// ssh-add reads passphrases from a terminal or an askpass
			// program; force the latter.
			askpass := filepath.Join(filepath.Dir(sock), "askpass")
			script := "#!/bin/sh\nprintf '%s\\n' " + ssh.Quote(k.Passphrase) + "\n"
			if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			add.Env = append(add.Env, "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
		}
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("ssh-add %s: %v: %s", k.File, err, out)
		}
	}
	return sock
}
