// Package s3test runs a real S3-compatible object store for tests: versitygw (built by
// test/s3/build.sh from test/s3/versitygw's go.mod and go.sum) serving a directory of the
// test's, over plain http or https, so that a test can check what was uploaded by reading
// files. The control planes' uploads of etcd.snapshots.s3 are tested against it with the curl
// commands they run.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/webhook/certs"
)

// Region is the region the server signs for.
const Region = "us-east-1"

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL, http://<addr> (Start) or https://<addr> (StartTLS).
	Endpoint string
	// CAFile is, for StartTLS, a PEM file of the CA that signed the server's certificate (for
	// the address only), and CA its content; "" and nil for Start.
	CAFile string
	CA     []byte
	// AccessKeyID and SecretAccessKey are its root account's, random for each server.
	AccessKeyID, SecretAccessKey string
	// Root is the directory it serves: a bucket is a directory, an object a file under it.
	Root string
}

// Binary returns the path of versitygw, building it on first use (minutes cold). A build that
// fails skips the test, except under CI=true.
func Binary(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("bash", filepath.Join(filepath.Dir(file), "..", "build.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, os.Stderr) // a cold build says so while it runs
	out, err := cmd.Output()
	if err != nil {
		msg := fmt.Sprintf("building versitygw with test/s3/build.sh: %v\n%s", err, stderr.String())
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return strings.TrimSpace(string(out))
}

// Start runs a server speaking plain http, listening on host (an IP address: 127.0.0.1, or a
// sandbox network's gateway that the sandbox hosts reach) at a free port, serving a new
// temporary directory, and stops it when the test ends. Its log goes to the test's log when the
// test fails.
func Start(t testing.TB, host string) *Server {
	t.Helper()
	return start(t, host, false)
}

// StartTLS is Start over https, with a certificate for host signed by a CA of the server's own
// (Server.CAFile).
func StartTLS(t testing.TB, host string) *Server {
	t.Helper()
	return start(t, host, true)
}

func start(t testing.TB, host string, withTLS bool) *Server {
	t.Helper()
	bin := Binary(t)
	s := &Server{AccessKeyID: "SLIPWAY" + strings.ToUpper(randomHex(t, 6)), SecretAccessKey: randomHex(t, 20), Root: t.TempDir()}
	logFile := filepath.Join(t.TempDir(), "versitygw.log")
	var tlsArgs []string
	scheme := "http"
	if withTLS {
		now := time.Now()
		serving, err := certs.New(now.Add(-time.Hour), now.Add(24*time.Hour), []string{host})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		s.CA, s.CAFile = serving.CA, filepath.Join(dir, "ca.crt")
		for name, data := range map[string][]byte{s.CAFile: serving.CA, filepath.Join(dir, "tls.crt"): serving.Cert, filepath.Join(dir, "tls.key"): serving.Key} {
			if err := os.WriteFile(name, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tlsArgs, scheme = []string{"--cert", filepath.Join(dir, "tls.crt"), "--key", filepath.Join(dir, "tls.key")}, "https"
	}
	// A free port: listen on :0, close, and start the server there (retried: another process
	// may take it in between).
	var lastErr error
	for range 3 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatalf("no port free on %s: %v", host, err)
		}
		addr := l.Addr().String()
		l.Close()
		log, err := os.Create(logFile)
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--access", s.AccessKeyID, "--secret", s.SecretAccessKey, "--region", Region, "--port", addr}, tlsArgs...)
		cmd := exec.Command(bin, append(args, "posix", s.Root)...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			log.Close()
			t.Fatalf("starting versitygw: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait(); log.Close() }()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		lastErr = kube.Wait(ctx, "versitygw on "+addr, 30*time.Second, func(context.Context) (bool, string, error) {
			select {
			case err := <-exited:
				exited <- err
				return true, "", fmt.Errorf("versitygw exited: %v", err)
			default:
			}
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return false, err.Error(), nil
			}
			c.Close()
			return true, "", nil
		})
		cancel()
		if lastErr == nil {
			s.Endpoint = scheme + "://" + addr
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-exited
				}
				if t.Failed() {
					if data, err := os.ReadFile(logFile); err == nil {
						t.Logf("versitygw's log:\n%s", tail(data, 8192))
					}
				}
			})
			return s
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	data, _ := os.ReadFile(logFile)
	t.Fatalf("versitygw did not start: %v\n%s", lastErr, tail(data, 4096))
	return nil
}

// CreateBucket makes a bucket through the S3 API, with curl signing as the control planes do.
func (s *Server) CreateBucket(t testing.TB, bucket string) {
	t.Helper()
	if out, err := s.Curl("-X", "PUT", s.Endpoint+"/"+bucket); err != nil {
		t.Fatalf("creating bucket %s: %v\n%s", bucket, err, out)
	}
}

// Curl runs curl with the server's credentials and AWS Signature Version 4, failing on an HTTP
// error, and returns what it printed.
func (s *Server) Curl(args ...string) (string, error) {
	return s.curl(EmptySHA256, args...)
}

// curl is Curl for a request whose payload has the SHA-256 sum (hex).
func (s *Server) curl(sum string, args ...string) (string, error) {
	base := []string{"-fsS", "--globoff", "--aws-sigv4", "aws:amz:" + Region + ":s3", "--user", s.AccessKeyID + ":" + s.SecretAccessKey,
		"-H", "x-amz-content-sha256: " + sum}
	if s.CAFile != "" {
		base = append(base, "--cacert", s.CAFile)
	}
	out, err := exec.Command("curl", append(base, args...)...).CombinedOutput()
	return string(out), err
}

// Put uploads data as key in bucket through the S3 API. The key is sent percent-encoded, so
// that it may hold characters that curl or a URL would otherwise read ({}, [], spaces).
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "object")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if out, err := s.curl(hex.EncodeToString(sum[:]), "-o", "/dev/null", "-T", f, s.Endpoint+"/"+bucket+"/"+URIEncode(key)); err != nil {
		t.Fatalf("putting %s into bucket %s: %v\n%s", key, bucket, err, out)
	}
}

// URIEncode percent-encodes every byte of key but letters, digits, '-', '.', '_', '~' and '/', as
// AWS Signature Version 4 wants a path.
func URIEncode(key string) string {
	var b strings.Builder
	for _, c := range []byte(key) {
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// EmptySHA256 is the SHA-256 of no bytes, the payload hash of a request without a body.
const EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Objects lists, sorted, the keys under prefix in bucket, from the served directory
// (versitygw's own bookkeeping, hidden directories, is left out).
func (s *Server) Objects(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	root := filepath.Join(s.Root, bucket)
	var keys []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			key, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if strings.HasPrefix(key, prefix) {
				keys = append(keys, filepath.ToSlash(key))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing bucket %s: %v", bucket, err)
	}
	slices.Sort(keys)
	return keys
}

// Path is the file that holds key in bucket.
func (s *Server) Path(bucket, key string) string {
	return filepath.Join(s.Root, bucket, filepath.FromSlash(key))
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
