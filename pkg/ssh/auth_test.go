package ssh_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

func TestAuth(t *testing.T) {
	sshd.Require(t)
	dir := sshd.TempDir(t)
	plain := sshd.NewKey(t, dir, "plain", "")
	locked := sshd.NewKey(t, dir, "locked", "correct horse")
	agentOnly := sshd.NewKey(t, dir, "agent-only", "")
	ca := sshd.NewKey(t, dir, "ca", "")
	certKey := sshd.NewKey(t, dir, "cert-user", "")
	sshd.Certify(t, ca, certKey, "root")
	// Ten unrelated agent keys: more than sshd's MaxAuthTries (6), so
	// trying them before the configured key would be refused.
	var noise []sshd.Key
	for i := range 10 {
		noise = append(noise, sshd.NewKey(t, dir, "noise"+string(rune('a'+i)), ""))
	}
	crowdedAgent := sshd.StartAgent(t, append(noise, agentOnly)...)
	agentSock := sshd.StartAgent(t, noise[0], agentOnly)
	lockedAgent := sshd.StartAgent(t, locked)

	keyServer := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{plain, locked, agentOnly}})
	// Only certificates signed by ca are accepted here: certKey itself is
	// not in authorized_keys.
	certServer := sshd.Start(t, sshd.Config{TrustedCA: &ca})

	tests := []struct {
		name       string
		server     *sshd.Server
		target     func(ssh.Target) ssh.Target
		passphrase ssh.PassphraseFunc
		env        map[string]string
		wantErr    string
	}{
		{name: "key file", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = plain.File; return t }},
		{name: "configured key before a crowded agent", server: keyServer, target: func(t ssh.Target) ssh.Target {
			t.PrivateKeyFile, t.AgentSocket = plain.File, crowdedAgent
			return t
		}},
		{name: "agent", server: keyServer, target: func(t ssh.Target) ssh.Target { t.AgentSocket = agentSock; return t }},
		{name: "crowded agent without a configured key", server: keyServer, target: func(t ssh.Target) ssh.Target {
			t.AgentSocket = crowdedAgent
			return t
		}, wantErr: "Too many authentication failures"},
		{name: "agent via SSH_AUTH_SOCK", server: keyServer, target: func(t ssh.Target) ssh.Target { return t },
			env: map[string]string{"SSH_AUTH_SOCK": lockedAgent}},
		{name: "certificate", server: certServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = certKey.File; return t }},
		{name: "certificate required", server: certServer, target: func(t ssh.Target) ssh.Target {
			t.PrivateKeyFile, t.CertificateFile = plain.File, ""
			return t
		}, wantErr: "authentication as root failed (offered ssh-ed25519 " + fp(plain) + " from " + plain.File + ")"},
		{name: "passphrase from env", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = locked.File; return t },
			env: map[string]string{ssh.PassphraseEnv: "correct horse"}},
		{name: "passphrase from func", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = locked.File; return t },
			passphrase: func(string) ([]byte, error) { return []byte("correct horse"), nil }},
		{name: "wrong passphrase", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = locked.File; return t },
			passphrase: func(string) ([]byte, error) { return []byte("wrong"), nil }, wantErr: "decrypting private key " + locked.File},
		{name: "encrypted key held by the agent needs no passphrase", server: keyServer, target: func(t ssh.Target) ssh.Target {
			t.PrivateKeyFile, t.AgentSocket = locked.File, lockedAgent
			return t
		}, passphrase: func(string) ([]byte, error) { return nil, errors.New("must not be asked") }},
		{name: "stale SSH_AUTH_SOCK is ignored when a key file is configured", server: keyServer,
			target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = plain.File; return t },
			env:    map[string]string{"SSH_AUTH_SOCK": "/nonexistent/agent.sock"}},
		{name: "configured agent socket must work", server: keyServer, target: func(t ssh.Target) ssh.Target {
			t.PrivateKeyFile, t.AgentSocket = plain.File, "/nonexistent/agent.sock"
			return t
		}, wantErr: "connecting to ssh-agent at /nonexistent/agent.sock"},
		{name: "key file that never ends", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = "/dev/zero"; return t },
			wantErr: "reading private key: /dev/zero is larger than 256 KiB"},
		{name: "certificate file that never ends", server: keyServer, target: func(t ssh.Target) ssh.Target {
			t.PrivateKeyFile, t.CertificateFile = plain.File, "/dev/zero"
			return t
		}, wantErr: "reading certificate: /dev/zero is larger than 256 KiB"},
		{name: "no passphrase source", server: keyServer, target: func(t ssh.Target) ssh.Target { t.PrivateKeyFile = locked.File; return t },
			wantErr: "is passphrase-protected: set SLIPWAY_SSH_PASSPHRASE or run on a terminal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SSH_AUTH_SOCK", "")
			// A developer's terminal must not be prompted: point the prompt
			// at a path that does not exist.
			ssh.SetTTYPath(t, "/nonexistent/tty")
			if _, ok := tt.env[ssh.PassphraseEnv]; !ok {
				os.Unsetenv(ssh.PassphraseEnv)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			pool := newPool(t, ssh.Options{Passphrase: tt.passphrase})
			base := ssh.Target{Name: "node", Address: tt.server.Address, Port: tt.server.Port, HostPublicKey: tt.server.HostKeyLine()}
			out, err := pool.Host(tt.target(base)).Command(ctxFor(t, time.Minute), "id", "-un").Output()
			if tt.wantErr != "" {
				var ce *ssh.ConnectError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a ConnectError containing %q", err, tt.wantErr)
				}
				t.Logf("user sees: %v", err)
				return
			}
			if err != nil || string(out) != "root\n" {
				t.Fatalf("id -un = %q, %v", out, err)
			}
		})
	}
}

func fp(k sshd.Key) string { return xssh.FingerprintSHA256(k.Public) }
