package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
)

// localHost runs commands and scripts with this machine's bash and tools. The lock's atomicity
// is its script's (flock on the guard file, a rename for every write), so running the real
// script on a real file system, from many runners at once, shows it; SSH adds nothing to it
// (TestLockOnASandboxHost runs it over SSH). down makes every command fail as an unreachable
// host would.
type localHost struct {
	down atomic.Bool
}

var _ ssh.Host = (*localHost)(nil)

func (h *localHost) Name() string { return "local" }

func (h *localHost) Command(ctx context.Context, name string, args ...string) *ssh.Cmd {
	return ssh.NewCommand(ctx, h.Name(), h.run, name, args...)
}

func (h *localHost) Script(ctx context.Context, name, script string) *ssh.Cmd {
	return ssh.NewScript(ctx, h.Name(), h.run, name, script)
}

func (h *localHost) run(ctx context.Context, c *ssh.Cmd, stdout, stderr io.Writer) error {
	if h.down.Load() {
		return &ssh.ConnectError{Host: h.Name(), User: "root", Address: "local", Err: errors.New("connection refused")}
	}
	var cmd *exec.Cmd
	if _, body, ok := c.Script(); ok {
		cmd = exec.CommandContext(ctx, "bash", "-s")
		cmd.Stdin = strings.NewReader(body)
	} else {
		args := c.Args()
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdin = c.Stdin
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ssh.ExitError{ExitStatus: ee.ExitCode()}
	}
	return err
}

func (h *localHost) Upload(context.Context, io.Reader, string, fs.FileMode, string) error {
	return errors.New("localHost: no uploads")
}
func (h *localHost) Download(context.Context, string, io.Writer) error {
	return errors.New("localHost: no downloads")
}
func (h *localHost) DialContext(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("localHost: no dialing")
}

func localLocker(h ssh.Host, path string, out io.Writer) *locker {
	return &locker{host: h, leader: "local", path: path, refresh: 50 * time.Millisecond, stale: time.Second, out: out}
}

// race has n runners take the lock at path at once and returns how many got it.
func race(t *testing.T, h ssh.Host, path string, n int) (won int, errs []error, release []func()) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// A minute before a lock is stale: on a loaded machine the winner's refreshes can
			// lag a second, and a loser would then rightly take over a lock it judged stale.
			// These races test that taking and taking over are atomic, not staleness.
			l := localLocker(h, path, io.Discard)
			l.stale = time.Minute
			_, unlock, err := l.take(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			won++
			release = append(release, unlock)
		}()
	}
	close(start)
	wg.Wait()
	return won, errs, release
}

func TestLockConcurrentRunners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slipway", "apply.lock")
	h := &localHost{}
	won, errs, release := race(t, h, path, 8)
	if won != 1 {
		t.Fatalf("%d of 8 runners took the lock at once, want exactly 1; errors: %v", won, errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "another apply holds the lock "+path+" on local") {
			t.Errorf("a loser got %v", err)
		}
	}
	release[0]()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after release the lock is still there: %v", err)
	}
	// Free again: the next runner takes it.
	if won, errs, release := race(t, h, path, 1); won != 1 {
		t.Fatalf("the lock was not free after release: %v", errs)
	} else {
		release[0]()
	}
}

func TestLockStaleTakeoverIsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apply.lock")
	stale := "token=" + strings.Repeat("ab", 16) + "\nowner=ops@crashed pid 7\nlocal=\n"
	if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	won, errs, release := race(t, &localHost{}, path, 8)
	if won != 1 {
		t.Fatalf("%d of 8 runners took over the stale lock, want exactly 1; errors: %v", won, errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "another apply holds the lock") && !strings.Contains(err.Error(), "changed hands") {
			t.Errorf("a loser got %v", err)
		}
	}
	release[0]()
}

func TestLockTakenOverAtOnceWhenItsHolderIsGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apply.lock")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := localIdentity()
	gone := fmt.Sprintf("boot=%s pidns=%s pid=%d start=1", fieldOf(me, "boot"), fieldOf(me, "pidns"), dead.Process.Pid)
	// Fresh (just written), but its process is gone: a killed apply on this machine.
	if err := os.WriteFile(path, []byte("token="+strings.Repeat("cd", 16)+"\nowner=ops@here pid 1\nlocal="+gone+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l := localLocker(&localHost{}, path, &out)
	l.stale = time.Hour
	_, unlock, err := l.take(context.Background())
	if err != nil {
		t.Fatalf("the lock of a gone holder was not taken over: %v", err)
	}
	defer unlock()
	if !strings.Contains(out.String(), "Taking over a stale apply lock on local held by ops@here pid 1") {
		t.Errorf("no takeover message: %q", out.String())
	}
}

func TestLockRefreshedAndLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apply.lock")
	l := localLocker(&localHost{}, path, io.Discard)
	ctx, unlock, err := l.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Refreshed: the modification time moves while the run holds the lock.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lock to be refreshed", func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.ModTime().After(past.Add(time.Minute))
	})
	// Another run takes it over (as one would after a long network outage): this run stops.
	other := "token=" + strings.Repeat("ef", 16) + "\nowner=ops@other pid 9\nlocal=\n"
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, ErrLockLost) || !strings.Contains(cause.Error(), "now held by ops@other pid 9") {
		t.Fatalf("cause = %v, want ErrLockLost naming the new holder", cause)
	}
	unlock()
	if data, err := os.ReadFile(path); err != nil || string(data) != other {
		t.Fatalf("release removed or changed another run's lock: %q, %v", data, err)
	}
}

func TestLockLostWhenItCannotBeRefreshed(t *testing.T) {
	h := &localHost{}
	l := localLocker(h, filepath.Join(t.TempDir(), "apply.lock"), io.Discard)
	ctx, unlock, err := l.take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	h.down.Store(true)
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, ErrLockLost) || !strings.Contains(cause.Error(), "could not be refreshed on local") {
		t.Fatalf("cause = %v, want ErrLockLost after failed refreshes", cause)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
