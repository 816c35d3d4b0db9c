package sshd

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Netns is a network namespace joined to this one by a veth pair: the
// host side is HostIP, the namespace side is IP. Its loopback is reachable
// only from inside, which is what tunnel tests need.
type Netns struct {
	Name   string
	IP     string
	HostIP string
}

// NewNetns creates a namespace and removes it at cleanup.
func NewNetns(t testing.TB) *Netns {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		skipOrFail(t, "iproute2 not installed (apt-get install iproute2): %v", err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	n, _ := rand.Int(rand.Reader, big.NewInt(250))
	octet := n.Int64() + 1
	ns := &Netns{
		Name:   "slipway-sshtest-" + id,
		HostIP: fmt.Sprintf("10.254.%d.1", octet),
		IP:     fmt.Sprintf("10.254.%d.2", octet),
	}
	host, peer := "swh"+id, "swn"+id
	steps := [][]string{
		{"ip", "netns", "add", ns.Name},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns.Name},
		{"ip", "addr", "add", ns.HostIP + "/30", "dev", host},
		{"ip", "link", "set", host, "up"},
		{"ip", "netns", "exec", ns.Name, "ip", "addr", "add", ns.IP + "/30", "dev", peer},
		{"ip", "netns", "exec", ns.Name, "ip", "link", "set", peer, "up"},
		{"ip", "netns", "exec", ns.Name, "ip", "link", "set", "lo", "up"},
	}
	t.Cleanup(func() {
		// Deleting the namespace deletes the peer, and with it the host end.
		_ = exec.Command("ip", "netns", "del", ns.Name).Run()
		_ = exec.Command("ip", "link", "del", host).Run()
	})
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			skipOrFail(t, "creating a network namespace (%s): %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return ns
}

// Listen opens a TCP listener inside the namespace, from this process.
func (n *Netns) Listen(addr string) (net.Listener, error) {
	var ln net.Listener
	err := inNetns(n.Name, func() (err error) {
		ln, err = net.Listen("tcp", addr)
		return err
	})
	return ln, err
}

// inNetns runs fn on an OS thread moved into the namespace. A socket stays
// in the namespace it was created in. The thread is never unlocked, so Go
// discards it when the goroutine ends instead of reusing it elsewhere.
func inNetns(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + name)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

func freePort(netns, addr string) (int, error) {
	var port int
	err := inNetns(netns, func() error {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
		if err != nil {
			return err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		return ln.Close()
	})
	return port, err
}

// dialFrom dials addr from inside netns (from here when empty), so that
// servers listening on a namespace's loopback can be checked too.
func dialFrom(netns string, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(netns, func() (err error) {
		c, err = net.Dial("tcp", addr)
		return err
	})
	return c, err
}
