package ssh_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/ssh/internal/sshd"
)

// TestBastionChain goes through two bastions to a host that listens only
// on the loopback of a network namespace, so only the second bastion (in
// that namespace) can reach it.
func TestBastionChain(t *testing.T) {
	sshd.Require(t)
	dir := sshd.TempDir(t)
	key := sshd.NewKey(t, dir, "id", "")
	jumpKey := sshd.NewKey(t, dir, "jump", "")
	ns := sshd.NewNetns(t)
	outer := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{jumpKey}})
	inner := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{jumpKey}, Netns: ns.Name, Address: ns.IP})
	hidden := sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}, Netns: ns.Name, Address: "127.0.0.1"})

	target := hidden.Target("worker-1", "root", key)
	target.Bastions = []ssh.Target{
		outer.Target("jump-outer", "root", jumpKey),
		inner.Target("jump-inner", "root", jumpKey),
	}
	p := newPool(t, ssh.Options{})
	out, err := p.Host(target).Command(ctxFor(t, time.Minute), "sh", "-c", "echo $SSH_CONNECTION").Output()
	if err != nil {
		t.Fatal(err)
	}
	// sshd reports "client-ip client-port server-ip server-port": the
	// hidden host was reached on its namespace loopback.
	if f := strings.Fields(string(out)); len(f) != 4 || f[2] != "127.0.0.1" || f[3] != itoa(hidden.Port) {
		t.Fatalf("SSH_CONNECTION = %q", out)
	}

	// A second host behind the same bastions shares their connections.
	target2 := target
	target2.Name = "worker-2"
	if err := p.Host(target2).Command(ctxFor(t, time.Minute), "true").Run(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(outer.Log(), "Accepted publickey"); n != 1 {
		t.Errorf("outer bastion accepted %d logins, want 1 shared connection", n)
	}

	// With the outer bastion down, a fresh pool says which hop failed.
	outer.Stop()
	p2 := newPool(t, ssh.Options{ConnectTimeout: 300 * time.Millisecond})
	err = p2.Host(target).Command(ctxFor(t, time.Minute), "true").Run()
	var ce *ssh.ConnectError
	if !errors.As(err, &ce) || ce.Host != "worker-1" || ce.Via != "jump-inner" {
		t.Fatalf("err = %v, want a ConnectError for worker-1 via jump-inner", err)
	}
	for _, want := range []string{"through bastion jump-inner", "connecting to jump-outer as root (127.0.0.1:" + itoa(outer.Port) + ")", "connection refused", "gave up after ", " attempts in "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	t.Logf("user sees: %v", err)
}

// TestBastionStillBooting reaches a host through a bastion whose sshd answers only after longer
// than one dial timeout, as a server that terraform apply has just created: the bastion is
// retried for the connect timeout, not for the host's one dial.
func TestBastionStillBooting(t *testing.T) {
	bastion, _, target := behindBastion(t)

	bastion.Stop()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(1500 * time.Millisecond) // test choreography: down for three dial timeouts
		bastion.Restart(t)
	}()
	var notices bytes.Buffer
	p := newPool(t, ssh.Options{DialTimeout: 500 * time.Millisecond, ConnectTimeout: 30 * time.Second, Notices: &notices})
	err := p.Host(target).Command(ctxFor(t, time.Minute), "true").Run()
	<-restarted
	if err != nil {
		t.Fatalf("through a bastion that boots within the connect timeout: %v", err)
	}
	// The wait is announced once, for the bastion.
	if n := notices.String(); !strings.HasPrefix(n, "[bastion] SSH is not answering yet (") || strings.Count(n, "\n") != 1 {
		t.Errorf("notices = %q, want one line about the bastion", n)
	}
}

// TestHostBootingBehindSlowBastion: the bastion answers only after most of the connect timeout,
// and the host behind it a little later. The host gets the whole timeout from the moment the
// bastion answers, not what the bastion left of it.
func TestHostBootingBehindSlowBastion(t *testing.T) {
	bastion, host, target := behindBastion(t)

	bastion.Stop()
	host.Stop()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		// Test choreography: the bastion is back after 2.5 s of a 3 s timeout, the host 1.5 s
		// after that, 1.5 s before its own 3 s run out.
		time.Sleep(2500 * time.Millisecond)
		bastion.Restart(t)
		time.Sleep(1500 * time.Millisecond)
		host.Restart(t)
	}()
	var notices bytes.Buffer
	p := newPool(t, ssh.Options{DialTimeout: 500 * time.Millisecond, ConnectTimeout: 3 * time.Second, Notices: &notices})
	err := p.Host(target).Command(ctxFor(t, time.Minute), "true").Run()
	<-restarted
	if err != nil {
		t.Fatalf("a host that answers within the connect timeout after its bastion: %v\nnotices:\n%s", err, notices.String())
	}
	for _, want := range []string{"[bastion] SSH is not answering yet", "[cp-1] SSH is not answering yet"} {
		if !strings.Contains(notices.String(), want) {
			t.Errorf("notices lack %q:\n%s", want, notices.String())
		}
	}
}

// behindBastion starts two sshds that take the same key, and returns them with a target that
// reaches host "cp-1" through "bastion".
func behindBastion(t *testing.T) (bastion, host *sshd.Server, target ssh.Target) {
	t.Helper()
	sshd.Require(t)
	key := sshd.NewKey(t, sshd.TempDir(t), "id", "")
	bastion = sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	host = sshd.Start(t, sshd.Config{AuthorizedKeys: []sshd.Key{key}})
	target = host.Target("cp-1", "root", key)
	target.Bastions = []ssh.Target{bastion.Target("bastion", "root", key)}
	return bastion, host, target
}
