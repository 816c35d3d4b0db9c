// Package sshd starts real OpenSSH sshd processes (and ssh-agent, test
// users, network namespaces) for pkg/ssh's integration tests and
// benchmarks. Every process it starts is killed by PID in t.Cleanup.
package sshd

import (
	"os"
	"os/exec"
	"testing"
)

// Binary is Debian's sshd; it must be started by absolute path.
const Binary = "/usr/sbin/sshd"

// Require skips t when real sshd tests cannot run here, and fails it
// instead when CI=true, where nothing may skip.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts real OpenSSH sshd processes")
	}
	if _, err := os.Stat(Binary); err != nil {
		skipOrFail(t, "OpenSSH server not installed (apt-get install openssh-server): %v", err)
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		skipOrFail(t, "ssh-keygen not installed (apt-get install openssh-client): %v", err)
	}
	if os.Geteuid() != 0 {
		skipOrFail(t, "these tests start sshd for several local users and need root (uid %d)", os.Geteuid())
	}
}

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// TempDir is a directory other local users can traverse (sshd reads
// authorized_keys as the login user), removed at cleanup.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "slipway-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
