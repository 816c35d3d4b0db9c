package ssh_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// randomData is size bytes of reproducible noise, generated as it is read.
func randomData(size int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{1, 2, 3}), size)
}

func TestUploadLarge(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  sshd.Config
		size int64
	}{
		{name: "sftp", size: 200 << 20},
		{name: "cat fallback", cfg: sshd.Config{NoSFTP: true}, size: 32 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.cfg, ssh.Options{})
			h := e.host("root")
			ctx := ctxFor(t, 5*time.Minute)
			dst := filepath.Join(sshd.TempDir(t), "kubelet")
			sum := sha256.New()
			peak := watchHeap(t)
			if err := h.Upload(ctx, io.TeeReader(randomData(tt.size), sum), dst, 0o750, "nobody:nogroup"); err != nil {
				t.Fatal(err)
			}
			if p := peak(); p > 64<<20 {
				t.Errorf("heap peaked at %d MiB while streaming %d MiB: the upload buffers", p>>20, tt.size>>20)
			}
			want := hex.EncodeToString(sum.Sum(nil))
			out, err := h.Command(ctx, "sh", "-c", `sha256sum "$1" | cut -d" " -f1; stat -c "%a %U:%G %s" "$1"`, "sh", dst).Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out); got != want+"\n750 nobody:nogroup "+itoa(int(tt.size))+"\n" {
				t.Fatalf("remote file: %q, want sha256 %s, mode 750, nobody:nogroup", got, want)
			}
			back := sha256.New()
			if err := h.Download(ctx, dst, back); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(back.Sum(nil)); got != want {
				t.Fatalf("downloaded sha256 %s, want %s", got, want)
			}
		})
	}
}

// TestUploadAtomic fails the source midway and checks that the old file is
// untouched and no temporary file is left, on both transfer paths.
func TestUploadAtomic(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  sshd.Config
	}{{name: "sftp"}, {name: "cat fallback", cfg: sshd.Config{NoSFTP: true}}} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.cfg, ssh.Options{})
			h := e.host("root")
			ctx := ctxFor(t, time.Minute)
			dir := sshd.TempDir(t)
			dst := filepath.Join(dir, "config.yaml")
			if err := h.Upload(ctx, strings.NewReader("old\n"), dst, 0o644, ""); err != nil {
				t.Fatal(err)
			}
			broken := io.MultiReader(randomData(3<<20), errReader{errors.New("disk on fire")})
			err := h.Upload(ctx, broken, dst, 0o644, "")
			if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "uploading "+dst+" to node-1") {
				t.Fatalf("err = %v, want the source's error with host and path", err)
			}
			var buf bytes.Buffer
			if err := h.Download(ctx, dst, &buf); err != nil || buf.String() != "old\n" {
				t.Fatalf("after a failed upload: %q, %v", buf.String(), err)
			}
			out, err := h.Command(ctx, "ls", "-A", dir).Output()
			if err != nil || string(out) != "config.yaml\n" {
				t.Fatalf("directory holds %q (%v), want only config.yaml", out, err)
			}
		})
	}
}

func TestTransferErrors(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	h := e.host("root")
	ctx := ctxFor(t, time.Minute)
	tests := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"relative path", func() error { return h.Upload(ctx, strings.NewReader(""), "etc/x", 0, "") }, `remote path "etc/x" is not absolute`},
		{"bad owner", func() error { return h.Upload(ctx, strings.NewReader(""), "/tmp/x", 0, "root;reboot") }, `owner "root;reboot" is invalid`},
		{"missing directory", func() error { return h.Upload(ctx, strings.NewReader(""), "/nonexistent/dir/x", 0, "") }, "uploading /nonexistent/dir/x to node-1"},
		{"missing file", func() error { return h.Download(ctx, "/nonexistent/file", io.Discard) }, "downloading /nonexistent/file from node-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// watchHeap samples the live heap until the returned func is called, and
// returns the peak.
func watchHeap(t *testing.T) func() uint64 {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		peak uint64
		wg   sync.WaitGroup
	)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(cancel)
	return func() uint64 {
		cancel()
		wg.Wait()
		return peak
	}
}

// TestReadFile: a file read into memory from a host is read with a limit, on both transfer
// paths: one within it arrives whole, and an endless one (/dev/zero) or one a byte over fails
// promptly with an error naming the file and the host, never growing the heap past the limit.
func TestReadFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  sshd.Config
	}{{name: "sftp"}, {name: "cat fallback", cfg: sshd.Config{NoSFTP: true}}} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.cfg, ssh.Options{})
			h := e.host("root")
			ctx := ctxFor(t, time.Minute)
			f := filepath.Join(sshd.TempDir(t), "admin.conf")
			if err := h.Upload(ctx, strings.NewReader("0123456789"), f, 0o600, ""); err != nil {
				t.Fatal(err)
			}
			if got, err := ssh.ReadFile(ctx, h, f, 10); err != nil || string(got) != "0123456789" {
				t.Errorf("a file of the limit's size: %q, %v", got, err)
			}
			if _, err := ssh.ReadFile(ctx, h, f, 9); !bounded.IsTooLarge(err) || err.Error() != f+" on node-1 is larger than 9 bytes, the most slipway reads from it" {
				t.Errorf("a file a byte over the limit: %v", err)
			}
			start := time.Now()
			peak := watchHeap(t)
			_, err := ssh.ReadFile(ctx, h, "/dev/zero", 1<<20)
			if !bounded.IsTooLarge(err) || !strings.Contains(err.Error(), "/dev/zero on node-1 is larger than 1 MiB") {
				t.Errorf("/dev/zero: %v", err)
			}
			if p := peak(); p > 32<<20 {
				t.Errorf("heap peaked at %d MiB reading /dev/zero with a 1 MiB limit", p>>20)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("/dev/zero took %s to be refused", d)
			}
			// The connection still serves.
			if out, err := h.Command(ctx, "echo", "ok").Output(); err != nil || string(out) != "ok\n" {
				t.Errorf("after the refused download: %q, %v", out, err)
			}
		})
	}
}
