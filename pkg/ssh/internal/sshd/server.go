package sshd

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Config describes one sshd instance.
type Config struct {
	// AuthorizedKeys may log in as any user.
	AuthorizedKeys []Key
	// TrustedCA, if set, signs user certificates sshd accepts.
	TrustedCA *Key
	// NoSFTP leaves out the sftp subsystem, to exercise the cat fallback.
	NoSFTP bool
	// Netns runs sshd inside this network namespace; Address must then be
	// the namespace's address.
	Netns string
	// Address to listen on; empty means 127.0.0.1.
	Address string
	// Extra sshd_config lines.
	Extra []string
}

// Server is a running sshd.
type Server struct {
	Address string
	Port    int
	HostKey xssh.PublicKey

	cfg    Config
	dir    string
	conf   string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	log    *logBuffer
}

// logBuffer is sshd's output, written by exec's copying goroutine while
// the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Start starts sshd with a fresh host key on a free port, and stops it at
// cleanup.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1"
	}
	dir := TempDir(t)
	s := &Server{Address: cfg.Address, cfg: cfg, dir: dir, conf: filepath.Join(dir, "sshd_config")}
	s.HostKey = hostKey(t, filepath.Join(dir, "host_ed25519_key"))
	var auth strings.Builder
	for _, k := range cfg.AuthorizedKeys {
		auth.WriteString(k.AuthorizedLine())
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(auth.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// sshd refuses to start without its privilege separation directory,
	// which Debian creates only when the service starts.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	var lastErr error
	for range 5 {
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatalf("starting sshd: %v", lastErr)
	return nil
}

func (s *Server) writeConfig() error {
	lines := []string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress " + s.Address,
		"HostKey " + filepath.Join(s.dir, "host_ed25519_key"),
		"PidFile none",
		"UsePAM no",
		"StrictModes no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"PermitRootLogin prohibit-password",
		"AuthorizedKeysFile " + filepath.Join(s.dir, "authorized_keys"),
		"AllowTcpForwarding yes",
		"MaxStartups 200",
		"LogLevel VERBOSE",
	}
	if !s.cfg.NoSFTP {
		lines = append(lines, "Subsystem sftp /usr/lib/openssh/sftp-server")
	}
	if s.cfg.TrustedCA != nil {
		ca := filepath.Join(s.dir, "trusted_ca.pub")
		if err := os.WriteFile(ca, []byte(s.cfg.TrustedCA.AuthorizedLine()), 0o644); err != nil {
			return err
		}
		lines = append(lines, "TrustedUserCAKeys "+ca)
	}
	lines = append(lines, s.cfg.Extra...)
	return os.WriteFile(s.conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func (s *Server) start() error {
	if s.Port == 0 {
		p, err := freePort(s.cfg.Netns, s.Address)
		if err != nil {
			return err
		}
		s.Port = p
	}
	if err := s.writeConfig(); err != nil {
		return err
	}
	args := []string{Binary, "-D", "-e", "-f", s.conf}
	if s.cfg.Netns != "" {
		args = append([]string{"ip", "netns", "exec", s.cfg.Netns}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	log := &logBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited, s.log = cmd, exited, log
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			s.Port = 0 // the port may have been taken: pick another
			return fmt.Errorf("sshd exited: %s", log.String())
		default:
		}
		// Only this process's own "listening" line proves the port is
		// ours: with fifty servers starting at once, another sshd may have
		// picked the same free port and would answer the banner check.
		if strings.Contains(log.String(), fmt.Sprintf("Server listening on %s port %d.", s.Address, s.Port)) && s.answers() {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("sshd did not answer on %s:%d within 10s: %s", s.Address, s.Port, log.String())
}

// answers reports whether an SSH banner comes back from the port.
func (s *Server) answers() bool {
	c, err := dialFrom(s.cfg.Netns, net.JoinHostPort(s.Address, strconv.Itoa(s.Port)))
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "SSH-2.0-OpenSSH")
}

// Target returns a target for user, authenticating with key, with the
// host key pinned.
func (s *Server) Target(name, user string, key Key) ssh.Target {
	return ssh.Target{
		Name: name, Address: s.Address, Port: s.Port, User: user,
		PrivateKeyFile: key.File, HostPublicKey: s.HostKeyLine(),
	}
}

// HostKeyLine is the host key in authorized_keys format.
func (s *Server) HostKeyLine() string {
	return strings.TrimSpace(string(xssh.MarshalAuthorizedKey(s.HostKey)))
}

// KnownHostsLine is the host key as a known_hosts entry.
func (s *Server) KnownHostsLine() string {
	return fmt.Sprintf("[%s]:%d %s\n", s.Address, s.Port, s.HostKeyLine())
}

// Log is what sshd wrote so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// Restart starts sshd again on the same port with the same host key.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("restarting sshd: %v", err)
	}
}

// Stop kills sshd and every process it forked (connections and the
// commands they run), by PID.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	pid := cmd.Process.Pid
	for _, p := range descendants(pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
	<-exited
}

// FreezeConnections stops (SIGSTOP) the processes serving current
// connections, as a silently dropped network path would look, and
// returns a func that kills them.
func (s *Server) FreezeConnections() (kill func()) {
	kids := s.signalConnections(syscall.SIGSTOP)
	return func() {
		for _, p := range kids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// KillConnections kills the processes serving current connections, and
// the commands they run, as a crash or a cut cable would, while sshd
// keeps accepting new connections.
func (s *Server) KillConnections() int {
	return len(s.signalConnections(syscall.SIGKILL))
}

func (s *Server) signalConnections(sig syscall.Signal) []int {
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	kids := descendants(pid)
	for _, p := range kids {
		_ = syscall.Kill(p, sig)
	}
	return kids
}
