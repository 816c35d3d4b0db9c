package cluster

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// TestLockOnASandboxHost takes the apply lock over SSH on a real host (a Docker sandbox host
// with systemd and sshd), as apply does: runners with connections of their own race for it and
// exactly one wins; a stale lock is taken over by exactly one; the lock survives the reset
// script, whose run holds it.
func TestLockOnASandboxHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Docker sandbox host: skipped under -short")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and there is no usable Docker daemon: %s", out)
		}
		t.Skipf("no usable Docker daemon: %s", strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	const name = "lock"
	sb, err := sandboxapi.Up(ctx, sandboxapi.Options{Name: name, Dir: t.TempDir(), Subnet: "172.30.242.0/24", Hosts: 1, Versions: []string{"v1.36.3"}})
	t.Cleanup(func() {
		if err := sandboxapi.Down(context.Background(), name); err != nil {
			t.Errorf("sandbox down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	h := sb.HostsWith(sandboxapi.ControlPlane)[0]
	target := ssh.Target{Name: h.Name, Address: h.IP, Port: 22, User: "root", PrivateKeyFile: sb.Path(sandboxapi.KeyFile), HostPublicKey: h.HostKey}
	// Every runner has a pool, and so a connection, of its own, like separate slipway processes.
	runner := func() *locker {
		pool := ssh.NewPool(ssh.Options{KnownHostsFiles: []string{}})
		t.Cleanup(func() { pool.Close() })
		return &locker{host: pool.Host(target), leader: h.Name, refresh: lockRefresh, stale: lockStale, out: io.Discard}
	}
	raceOver := func(n int) (won []func(), errs []error) {
		type result struct {
			unlock func()
			err    error
		}
		results := make(chan result, n)
		runners := make([]*locker, n)
		for i := range runners {
			runners[i] = runner()
			// Connect first, so that the race is the lock's, not the handshakes'.
			if err := runners[i].host.Command(ctx, "true").Run(); err != nil {
				t.Fatal(err)
			}
		}
		start := make(chan struct{})
		for _, l := range runners {
			go func() {
				<-start
				_, unlock, err := l.take(ctx)
				results <- result{unlock, err}
			}()
		}
		close(start)
		for range n {
			r := <-results
			if r.err != nil {
				errs = append(errs, r.err)
			} else {
				won = append(won, r.unlock)
			}
		}
		return won, errs
	}

	won, errs := raceOver(4)
	if len(won) != 1 {
		t.Fatalf("%d of 4 runners took the lock at once, want 1; errors: %v", len(won), errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "another apply holds the lock "+scripts.ApplyLockPath+" on "+h.Name) {
			t.Errorf("a loser got %v", err)
		}
	}

	// The reset script keeps the lock (its run holds it) and removes the rest of slipway's state.
	if _, err := sb.Run(ctx, h, "mkdir -p /var/lib/slipway/assets/v1 && touch /var/lib/slipway/assets/v1/kubeadm"); err != nil {
		t.Fatal(err)
	}
	reset, err := scripts.Reset(scripts.OS{ID: "debian", VersionID: "12"}, scripts.ResetParams{Cluster: testCluster(t, h.IP)})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sb.RunScript(ctx, h, reset); err != nil || !strings.Contains(out, "removed /var/lib/slipway/assets") {
		t.Fatalf("reset: %v\n%s", err, out)
	}
	if out, err := sb.Run(ctx, h, "ls -A /var/lib/slipway | tr '\\n' ' '"); err != nil || out != "apply.lock apply.lock.guard " {
		t.Errorf("after reset /var/lib/slipway holds %q (%v), want the lock alone", out, err)
	}
	won[0]()
	if out, err := sb.Run(ctx, h, "ls -A /var/lib/slipway | tr '\\n' ' '"); err != nil || out != "apply.lock.guard " {
		t.Errorf("after release /var/lib/slipway holds %q (%v)", out, err)
	}

	// A lock its holder stopped refreshing ten minutes ago: exactly one of the runners that
	// find it stale takes it over.
	crashed := "printf 'token=" + strings.Repeat("ab", 16) + "\\nowner=ops@crashed pid 7\\nlocal=\\n' >" + scripts.ApplyLockPath +
		" && touch -d '-10 min' " + scripts.ApplyLockPath
	if _, err := sb.Run(ctx, h, crashed); err != nil {
		t.Fatal(err)
	}
	won, errs = raceOver(4)
	if len(won) != 1 {
		t.Fatalf("%d of 4 runners took over the stale lock, want 1; errors: %v", len(won), errs)
	}
	won[0]()
}
