package ssh_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

func TestHostKeys(t *testing.T) {
	sshd.Require(t)
	dir := sshd.TempDir(t)
	key := sshd.NewKey(t, dir, "id", "")
	s := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	other := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	got := "ssh-ed25519 " + xssh.FingerprintSHA256(s.HostKey)
	wrong := "ssh-ed25519 " + xssh.FingerprintSHA256(other.HostKey)

	write := func(name, content string) string {
		p := filepath.Join(sshd.TempDir(t), name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The wrong key sits on line 2, after a comment, to check line numbers.
	stale := write("known_hosts", "# stale entry below\n"+strings.Replace(other.KnownHostsLine(), other.Address+"]:"+itoa(other.Port), s.Address+"]:"+itoa(s.Port), 1))
	good := write("known_hosts", s.KnownHostsLine())

	tests := []struct {
		name    string
		pinned  string
		opts    ssh.Options
		wantErr []string // substrings; none means success
		unknown bool
	}{
		{name: "pinned key", pinned: s.HostKeyLine()},
		{name: "pinned key mismatch", pinned: other.HostKeyLine(),
			wantErr: []string{"does not match", "the host presented " + got, "the key pinned for this host (manifest or Terraform output) expects " + wrong, "update the pinned key"}},
		{name: "pinned key wins over known_hosts", pinned: s.HostKeyLine(), opts: ssh.Options{KnownHostsFiles: []string{stale}}},
		{name: "known_hosts", opts: ssh.Options{KnownHostsFiles: []string{good}}},
		{name: "known_hosts mismatch", opts: ssh.Options{KnownHostsFiles: []string{stale}},
			wantErr: []string{"the host presented " + got, stale + ":2 expects " + wrong, "remove line 2 of " + stale, "ssh-keygen -R '[127.0.0.1]:" + itoa(s.Port) + "' -f " + stale}},
		{name: "cluster known_hosts", opts: ssh.Options{ClusterKnownHostsFile: good}},
		{name: "unknown host refused", opts: ssh.Options{KnownHostsFiles: []string{filepath.Join(dir, "missing")}, ClusterKnownHostsFile: filepath.Join(dir, "cluster_known_hosts")},
			wantErr: []string{"is unknown: the host presented " + got, "--trust-unknown-hosts", "records it in " + filepath.Join(dir, "cluster_known_hosts")}, unknown: true},
		{name: "trust on first use does not override a mismatch", opts: ssh.Options{KnownHostsFiles: []string{stale}, ClusterKnownHostsFile: filepath.Join(dir, "tofu2"), TrustOnFirstUse: true},
			wantErr: []string{"does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, tt.opts)
			target := s.Target("node-1", "root", key)
			target.HostPublicKey = tt.pinned
			err := p.Conn(target).Connect(ctxFor(t, time.Minute))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var he *ssh.HostKeyError
			if !errors.As(err, &he) || (len(he.Want) == 0) != tt.unknown {
				t.Fatalf("err = %v, want a HostKeyError (unknown: %v)", err, tt.unknown)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			t.Logf("user sees: %v", err)
		})
	}
}

// TestKnownHostsBounded: a known_hosts file is read on every handshake, so one that is not a
// regular file or is beyond any real size is refused with its name instead of read.
func TestKnownHostsBounded(t *testing.T) {
	sshd.Require(t)
	key := sshd.NewKey(t, sshd.TempDir(t), "id", "")
	s := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	huge := filepath.Join(t.TempDir(), "known_hosts")
	// Sparse: 65 MiB long, without taking the disk.
	if err := os.WriteFile(huge, nil, 0o600); err != nil || os.Truncate(huge, 65<<20) != nil {
		t.Fatal("cannot create the sparse file")
	}
	for _, tt := range []struct{ file, want string }{
		{"/dev/zero", "reading known_hosts: /dev/zero is not a regular file"},
		{huge, "reading known_hosts: " + huge + " is larger than 64 MiB"},
	} {
		p := newPool(t, ssh.Options{KnownHostsFiles: []string{tt.file}})
		target := s.Target("node-1", "root", key)
		target.HostPublicKey = "" // nothing pinned: the files decide
		err := p.Conn(target).Connect(ctxFor(t, time.Minute))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("known_hosts %s: err = %v, want one containing %q", tt.file, err, tt.want)
		}
	}
}

func TestTrustOnFirstUse(t *testing.T) {
	sshd.Require(t)
	dir := sshd.TempDir(t)
	key := sshd.NewKey(t, dir, "id", "")
	s := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	record := filepath.Join(dir, "cluster", "known_hosts")
	target := s.Target("node-1", "root", key)
	target.HostPublicKey = ""

	p := newPool(t, ssh.Options{ClusterKnownHostsFile: record, TrustOnFirstUse: true})
	if err := p.Conn(target).Connect(ctxFor(t, time.Minute)); err != nil {
		t.Fatalf("first use with trust: %v", err)
	}
	data, err := os.ReadFile(record)
	if err != nil || string(data) != s.KnownHostsLine() {
		t.Fatalf("recorded %q (%v), want %q", data, err, s.KnownHostsLine())
	}
	// Without the flag, the recorded key is now known.
	p2 := newPool(t, ssh.Options{ClusterKnownHostsFile: record})
	if err := p2.Conn(target).Connect(ctxFor(t, time.Minute)); err != nil {
		t.Fatalf("second use without trust: %v", err)
	}
	// The host is reinstalled: a new key on the same address is refused,
	// even with trust on first use, and nothing more is recorded.
	s.Stop()
	s2 := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	target.Port = s2.Port
	s3line := strings.Replace(s.KnownHostsLine(), itoa(s.Port), itoa(s2.Port), 1)
	if err := os.WriteFile(record, []byte(s3line), 0o600); err != nil {
		t.Fatal(err)
	}
	p3 := newPool(t, ssh.Options{ClusterKnownHostsFile: record, TrustOnFirstUse: true})
	err = p3.Conn(target).Connect(ctxFor(t, time.Minute))
	var he *ssh.HostKeyError
	if !errors.As(err, &he) || len(he.Want) != 1 || he.Want[0].File != record || he.Want[0].Line != 1 {
		t.Fatalf("err = %v, want a mismatch against %s:1", err, record)
	}
	if data, _ := os.ReadFile(record); string(data) != s3line {
		t.Fatalf("record changed to %q", data)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
