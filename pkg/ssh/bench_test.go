package ssh_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// Benchmarks log in as a plain user without sudo: they measure the
// transport, not a login shell's rc files or sudo's own start-up.
func benchOptions() ssh.Options {
	return ssh.Options{Sudo: ssh.SudoNever, KnownHostsFiles: []string{}}
}

// BenchmarkFanOut runs `true` on 1 and on 50 hosts over cached
// connections, all hosts at once. The target: 50 hosts take at
// most twice as long as one.
func BenchmarkFanOut(b *testing.B) {
	sshd.Require(b)
	sshd.EnsureUsers(b)
	fleet := startFleet(b, 50, sshd.SudoUser)
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			p := ssh.NewPool(benchOptions())
			defer p.Close()
			if err := runTrue(p, fleet[:n]); err != nil { // connect outside the timing
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := runTrue(p, fleet[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFanOutCold is BenchmarkFanOut with a new pool per run, so
// every host's TCP dial, key exchange and authentication is included.
func BenchmarkFanOutCold(b *testing.B) {
	sshd.Require(b)
	sshd.EnsureUsers(b)
	fleet := startFleet(b, 50, sshd.SudoUser)
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			for b.Loop() {
				p := ssh.NewPool(benchOptions())
				err := runTrue(p, fleet[:n])
				p.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// runTrue runs `true` on all targets at once.
func runTrue(p *ssh.Pool, targets []ssh.Target) error { return runAll(p, targets, "true") }

func runAll(p *ssh.Pool, targets []ssh.Target, args ...string) error {
	return ssh.ForEach(context.Background(), targets, len(targets), func(ctx context.Context, t ssh.Target) error {
		return p.Host(t).Command(ctx, args[0], args[1:]...).Run()
	}, nil)
}

// BenchmarkFanOutSleep runs `sleep 0.2` on 1 and on 50 hosts: remote work
// that waits instead of using this machine's CPU, as on real separate
// hosts. It shows whether fan-out itself serializes anything.
func BenchmarkFanOutSleep(b *testing.B) {
	sshd.Require(b)
	sshd.EnsureUsers(b)
	fleet := startFleet(b, 50, sshd.SudoUser)
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			p := ssh.NewPool(benchOptions())
			defer p.Close()
			if err := runTrue(p, fleet[:n]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := runAll(p, fleet[:n], "sleep", "0.2"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSequential runs 100 commands one after another over one cached
// connection and reports the time per command. Target: at most 3 ms.
// The x-crypto case runs the same commands with bare x/crypto/ssh
// sessions on the same server, as the floor this package adds to.
func BenchmarkSequential(b *testing.B) {
	sshd.Require(b)
	sshd.EnsureUsers(b)
	key := sshd.NewKey(b, sshd.TempDir(b), "id", "")
	s := sshd.Start(b, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	ctx := context.Background()
	b.Run("pool", func(b *testing.B) {
		p := ssh.NewPool(benchOptions())
		defer p.Close()
		h := p.Host(s.Target("node", sshd.SudoUser, key))
		perCommand(b, func() error { return h.Command(ctx, "true").Run() })
	})
	b.Run("x-crypto", func(b *testing.B) {
		pem, err := os.ReadFile(key.File)
		if err != nil {
			b.Fatal(err)
		}
		signer, err := xssh.ParsePrivateKey(pem)
		if err != nil {
			b.Fatal(err)
		}
		c, err := xssh.Dial("tcp", net.JoinHostPort(s.Address, strconv.Itoa(s.Port)), &xssh.ClientConfig{
			User: sshd.SudoUser, Auth: []xssh.AuthMethod{xssh.PublicKeys(signer)},
			HostKeyCallback: xssh.FixedHostKey(s.HostKey),
		})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		perCommand(b, func() error {
			se, err := c.NewSession()
			if err != nil {
				return err
			}
			defer se.Close()
			return se.Run("true")
		})
	})
}

func perCommand(b *testing.B, run func() error) {
	if err := run(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		for range 100 {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N*100), "ms/cmd")
}

// BenchmarkUpload streams 256 MiB per run to a file on the host and
// reports MB/s. Target: at least 200 MB/s.
func BenchmarkUpload(b *testing.B) {
	sshd.Require(b)
	sshd.EnsureUsers(b)
	for _, tt := range []struct {
		name string
		cfg  sshd.Config
	}{{name: "sftp"}, {name: "cat", cfg: sshd.Config{NoSFTP: true}}} {
		b.Run(tt.name, func(b *testing.B) {
			const size = 256 << 20
			key := sshd.NewKey(b, sshd.TempDir(b), "id", "")
			cfg := tt.cfg
			cfg.AuthorizedKeys = []sshd.Key{key}
			s := sshd.Start(b, cfg)
			dir := sshd.TempDir(b)
			if out, err := exec.Command("chown", sshd.SudoUser, dir).CombinedOutput(); err != nil {
				b.Fatalf("chown: %v: %s", err, out)
			}
			p := ssh.NewPool(benchOptions())
			defer p.Close()
			h := p.Host(s.Target("node", sshd.SudoUser, key))
			ctx := context.Background()
			if err := h.Command(ctx, "true").Run(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				if err := h.Upload(ctx, io.LimitReader(repeatReader{}, size), filepath.Join(dir, "blob"), 0o644, ""); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if fi, err := os.Stat(filepath.Join(dir, "blob")); err != nil || fi.Size() != size {
				b.Fatalf("uploaded file: %v, %v", fi, err)
			}
		})
	}
}

// repeatReader yields a fixed pattern at memory speed, so the benchmark
// measures the transfer, not a random number generator.
type repeatReader struct{}

var pattern = func() []byte {
	p := make([]byte, 1<<20)
	for i := range p {
		p[i] = byte(i * 7)
	}
	return p
}()

func (repeatReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		n += copy(b[n:], pattern)
	}
	return n, nil
}
