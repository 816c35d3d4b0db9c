package sshd

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	xssh "golang.org/x/crypto/ssh"
)

// Key is a key pair on disk.
type Key struct {
	File       string // private key
	Public     xssh.PublicKey
	Passphrase string
}

// AuthorizedLine is the public key in authorized_keys format.
func (k Key) AuthorizedLine() string {
	return string(xssh.MarshalAuthorizedKey(k.Public))
}

// NewKey generates a user key with OpenSSH's ssh-keygen, so tests read
// the exact files users have; a non-empty passphrase encrypts it.
func NewKey(t testing.TB, dir, name, passphrase string) Key {
	t.Helper()
	file := filepath.Join(dir, name)
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", file)
	return Key{File: file, Public: readPublic(t, file+".pub"), Passphrase: passphrase}
}

// Certify signs user's public key with ca as an OpenSSH user certificate
// for principal, valid for an hour, and returns the certificate's path
// (user.File + "-cert.pub", where OpenSSH looks for it).
func Certify(t testing.TB, ca, user Key, principal string) string {
	t.Helper()
	run(t, "ssh-keygen", "-q", "-s", ca.File, "-I", "slipway-test", "-n", principal, "-V", "-5m:+1h", user.File+".pub")
	return user.File + "-cert.pub"
}

// hostKey writes a fresh ed25519 host key. Generated in-process: fan-out
// tests need fifty of them.
func hostKey(t testing.TB, file string) xssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := xssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := xssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func readPublic(t testing.TB, file string) xssh.PublicKey {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	k, _, _, _, err := xssh.ParseAuthorizedKey(data)
	if err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	return k
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}
