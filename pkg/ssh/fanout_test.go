package ssh_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// startFleet starts n sshd instances and returns targets for user.
func startFleet(t testing.TB, n int, user string) []ssh.Target {
	sshd.Require(t)
	key := sshd.NewKey(t, sshd.TempDir(t), "id", "")
	targets := make([]ssh.Target, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
			targets[i] = s.Target(fmt.Sprintf("node-%02d", i), user, key)
		}()
	}
	wg.Wait()
	return targets
}

func TestFanOut50(t *testing.T) {
	sshd.Require(t)
	sshd.EnsureUsers(t)
	targets := startFleet(t, 50, sshd.SudoUser)
	// Three hosts refuse every command: their failures must all come back.
	broken := map[string]bool{"node-07": true, "node-23": true, "node-41": true}
	p := newPool(t, ssh.Options{})
	// sudo resets the environment, so the port each command reached is
	// read through a second pool that runs as the login user.
	plain := newPool(t, ssh.Options{Sudo: ssh.SudoNever})
	ctx := ctxFor(t, 5*time.Minute)

	var (
		mu       sync.Mutex
		ports    = map[string]string{}
		started  = map[string]bool{}
		finished = map[string]error{}
	)
	progress := func(ev ssh.Event) {
		if ev.Done {
			finished[ev.Host] = ev.Err
		} else {
			started[ev.Host] = true
		}
	}
	err := ssh.ForEach(ctx, targets, 25, func(ctx context.Context, tg ssh.Target) error {
		script := "id -un"
		if broken[tg.Name] {
			script = "echo broken disk >&2; exit 7"
		}
		user, err := p.Host(tg).Script(ctx, "check", script).Output()
		if err != nil {
			return err
		}
		port, err := plain.Host(tg).Command(ctx, "sh", "-c", `echo "${SSH_CONNECTION##* }"`).Output()
		if err != nil {
			return err
		}
		mu.Lock()
		ports[tg.Name] = string(user) + string(port)
		mu.Unlock()
		return nil
	}, progress)

	if len(started) != 50 || len(finished) != 50 {
		t.Fatalf("progress: %d started, %d finished, want 50 each", len(started), len(finished))
	}
	for _, tg := range targets {
		if broken[tg.Name] {
			continue
		}
		if want := "root\n" + itoa(tg.Port) + "\n"; ports[tg.Name] != want {
			t.Errorf("%s answered %q, want %q", tg.Name, ports[tg.Name], want)
		}
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("err = %v, want 3 joined errors", err)
	}
	for name := range broken {
		if !strings.Contains(err.Error(), "running script check on "+name+": exit status 7\n  stderr: broken disk") || finished[name] == nil {
			t.Errorf("error for %s missing:\n%v", name, err)
		}
	}
	t.Logf("user sees:\n%v", err)
}
