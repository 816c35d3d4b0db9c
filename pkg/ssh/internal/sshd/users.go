package sshd

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Test users: one with passwordless sudo, one whose sudo asks for a
// password. They are created once and left in place (idempotent), like
// any package a test installs.
const (
	SudoUser     = "slipway-sudo"
	PasswordUser = "slipway-sudopw"
)

var usersOnce sync.Once
var usersErr string

// EnsureUsers creates SudoUser and PasswordUser and their sudoers rules.
func EnsureUsers(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("sudo"); err != nil {
		skipOrFail(t, "sudo not installed (apt-get install sudo): %v", err)
	}
	usersOnce.Do(func() { usersErr = ensureUsers() })
	if usersErr != "" {
		t.Fatal(usersErr)
	}
}

func ensureUsers() string {
	for _, u := range []string{SudoUser, PasswordUser} {
		if exec.Command("id", u).Run() == nil {
			continue
		}
		if out, err := exec.Command("useradd", "--create-home", "--shell", "/bin/bash", u).CombinedOutput(); err != nil {
			return "useradd " + u + ": " + err.Error() + ": " + string(out)
		}
		// A locked account ("!" in shadow) may not log in when sshd runs
		// without PAM, so give each a random, unused password.
		cmd := exec.Command("chpasswd")
		cmd.Stdin = strings.NewReader(u + ":" + randomWord() + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "chpasswd " + u + ": " + err.Error() + ": " + string(out)
		}
	}
	rules := SudoUser + " ALL=(ALL) NOPASSWD: ALL\n" + PasswordUser + " ALL=(ALL) ALL\n"
	if err := os.WriteFile("/etc/sudoers.d/slipway-test", []byte(rules), 0o440); err != nil {
		return err.Error()
	}
	return ""
}

func randomWord() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
