package ssh_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

func TestConnectionKilledMidCommand(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	h := e.host("root")
	ctx := ctxFor(t, time.Minute)
	if err := h.Command(ctx, "true").Run(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		c := h.Command(ctx, "sh", "-c", "echo started; exec sleep 60")
		c.Stdout = writerFunc(func(p []byte) (int, error) {
			if strings.Contains(string(p), "started") {
				close(started)
			}
			return len(p), nil
		})
		done <- c.Run()
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("command ended early: %v", err)
	case <-ctx.Done():
		t.Fatal("command did not start")
	}
	if n := e.server.KillConnections(); n == 0 {
		t.Fatal("no connection process to kill")
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("command did not notice the connection was killed within 20s")
	}
	if !errors.Is(err, ssh.ErrConnectionLost) || !strings.Contains(err.Error(), "running sh -c 'echo started; exec sleep 60' on node-1: connection lost") {
		t.Fatalf("err = %v, want ErrConnectionLost naming host and command", err)
	}
	t.Logf("user sees: %v", err)
	// The next call reconnects.
	if out, err := h.Command(ctx, "echo", "back").Output(); err != nil || string(out) != "back\n" {
		t.Fatalf("after reconnect: %q, %v", out, err)
	}
}

func TestReconnectWithBackoff(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{ConnectTimeout: 30 * time.Second})
	h := e.host("root")
	ctx := ctxFor(t, time.Minute)
	if err := h.Command(ctx, "true").Run(); err != nil {
		t.Fatal(err)
	}
	// sshd goes away (a reboot) and comes back while the next command is
	// trying to connect: the dial is retried, not failed.
	e.server.Stop()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(700 * time.Millisecond) // test choreography: be down for a while
		e.server.Restart(t)
	}()
	err := h.Command(ctx, "true").Run()
	<-restarted
	if err != nil {
		t.Fatalf("command during restart: %v\nsshd log:\n%s", err, e.server.Log())
	}
}

func TestPoolClose(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{})
	h := e.host("root")
	if err := h.Command(ctxFor(t, time.Minute), "true").Run(); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := h.Command(context.Background(), "true").Run()
	var ce *ssh.ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("after Close: %v, want a ConnectError", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestKeepAliveDetectsSilentDrop freezes the server side of a connection:
// nothing is closed, packets just stop being answered. Keepalives must
// notice, so the next command dials afresh instead of hanging.
func TestKeepAliveDetectsSilentDrop(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{KeepAlive: 200 * time.Millisecond})
	h := e.host("root")
	ctx := ctxFor(t, time.Minute)
	if err := h.Command(ctx, "true").Run(); err != nil {
		t.Fatal(err)
	}
	kill := e.server.FreezeConnections()
	t.Cleanup(kill)
	// Three missed keepalives (~600 ms) close the frozen connection; give
	// it a generous bound on a loaded machine.
	cmdCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	time.Sleep(time.Second) // let the keepalives run out before using the host
	out, err := h.Command(cmdCtx, "echo", "fresh").Output()
	if err != nil || string(out) != "fresh\n" {
		t.Fatalf("after a silent drop: %q, %v", out, err)
	}
}

// TestCancelOnFrozenConnection: without keepalives, a command on a frozen
// connection still returns when its context ends.
func TestCancelOnFrozenConnection(t *testing.T) {
	e := newEnv(t, sshd.Config{}, ssh.Options{KeepAlive: -1})
	h := e.host("root")
	if err := h.Command(ctxFor(t, time.Minute), "true").Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.server.FreezeConnections())
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Command(ctx, "true").Run() }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("command on a frozen connection ignored its context")
	}
}
