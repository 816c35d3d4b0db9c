package ssh_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

func targets(n int) []ssh.Target {
	out := make([]ssh.Target, n)
	for i := range out {
		out[i] = ssh.Target{Name: "h" + itoa(i), Address: "10.0.0." + itoa(i+1)}
	}
	return out
}

func TestForEachLimitsConcurrency(t *testing.T) {
	for _, tt := range []struct {
		name           string
		hosts, limit   int
		wantMaxRunning int32
	}{
		{"explicit limit", 20, 3, 3},
		{"default limit", 30, 0, ssh.DefaultParallel},
		{"fewer hosts than the limit", 4, 10, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var running, peak atomic.Int32
			// Hold every slot until the expected number run at once, so the
			// peak does not depend on scheduling; the timeout only matters
			// if ForEach allows fewer than expected.
			gate := make(chan struct{})
			var once sync.Once
			err := ssh.ForEach(context.Background(), targets(tt.hosts), tt.limit, func(ctx context.Context, _ ssh.Target) error {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if n >= tt.wantMaxRunning {
					once.Do(func() { close(gate) })
				}
				select {
				case <-gate:
				case <-time.After(2 * time.Second):
				}
				running.Add(-1)
				return nil
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if peak.Load() != tt.wantMaxRunning {
				t.Fatalf("peak concurrency %d, want %d", peak.Load(), tt.wantMaxRunning)
			}
		})
	}
}

func TestForEachErrors(t *testing.T) {
	fleet := &sshtest.Fleet{}
	fleet.Get("h1").On(`^kubeadm`, sshtest.Response{Stderr: "boom\n", ExitStatus: 2})
	fleet.Get("h3").On(`^kubeadm`, sshtest.Response{Err: errors.New("plain failure")})
	var events []ssh.Event
	err := ssh.ForEach(context.Background(), targets(4), 2, func(ctx context.Context, tg ssh.Target) error {
		return fleet.Host(tg).Command(ctx, "kubeadm", "reset", "-f").Run()
	}, func(e ssh.Event) { events = append(events, e) })
	want := "running kubeadm reset -f on h1: exit status 2\n  stderr: boom\nh3: plain failure"
	if err == nil || err.Error() != want {
		t.Fatalf("err:\n%v\nwant:\n%s", err, want)
	}
	if len(events) != 8 {
		t.Fatalf("%d events, want 8 (start and done per host)", len(events))
	}
	for _, name := range []string{"h0", "h1", "h2", "h3"} {
		if got := fleet.Get(name).Commands(); len(got) != 1 || got[0] != "kubeadm reset -f" {
			t.Errorf("%s received %q", name, got)
		}
	}
}

func TestForEachCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	err := ssh.ForEach(ctx, targets(5), 1, func(ctx context.Context, tg ssh.Target) error {
		ran.Add(1)
		cancel()
		return nil
	}, nil)
	if ran.Load() != 1 || !errors.Is(err, context.Canceled) || strings.Count(err.Error(), "context canceled") != 4 {
		t.Fatalf("ran %d, err %v; want 1 run and 4 cancelled hosts", ran.Load(), err)
	}
}

// TestEachJoinsEveryErrorInOrder runs Each over plain values: every item runs, even those
// after a failure, and the errors come back in the order of the items.
func TestEachJoinsEveryErrorInOrder(t *testing.T) {
	var ran atomic.Int32
	err := ssh.Each(context.Background(), []int{1, 2, 3, 4, 5, 6}, 2, func(_ context.Context, i int) error {
		ran.Add(1)
		if i%2 == 0 {
			return errors.New("even " + itoa(i))
		}
		return nil
	})
	if ran.Load() != 6 || err == nil || err.Error() != "even 2\neven 4\neven 6" {
		t.Fatalf("ran %d, err %q; want all 6 run and the even ones' errors in order", ran.Load(), err)
	}
	if err := ssh.Each(context.Background(), []string(nil), 0, func(context.Context, string) error { return errors.New("no items, no calls") }); err != nil {
		t.Fatal(err)
	}
}
