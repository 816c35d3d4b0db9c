package hosts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// requireDocker skips when no Docker daemon answers, except in CI, where nothing may skip.
func requireDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots servers as Docker hosts: skipped under -short")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		msg := "no usable Docker daemon: " + strings.TrimSpace(string(out))
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and %s", msg)
		}
		t.Skip(msg)
	}
}

type cloud struct {
	sim     *openstacktest.Sim
	backend *hosts.Backend
	compute *gophercloud.ServiceClient
	network *gophercloud.ServiceClient
}

func startCloud(t *testing.T, name string) *cloud {
	t.Helper()
	requireDocker(t)
	ctx := context.Background()
	b, err := hosts.New(ctx, hosts.Options{Name: name, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	sim := openstacktest.New(openstacktest.Options{Hypervisor: b, Logf: t.Logf})
	t.Cleanup(func() {
		sim.Close()
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
		for _, kind := range [][]string{{"ps", "-aq"}, {"volume", "ls", "-q"}, {"network", "ls", "-q"}} {
			out, err := sandboxapi.Docker(context.Background(), append(kind, "--filter", "label="+hosts.Label+"="+name)...)
			if err != nil || out != "" {
				t.Errorf("after Close, docker %v lists %q (%v)", kind, out, err)
			}
		}
	})
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
		Username: openstacktest.Username, Password: openstacktest.Password,
		DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName})
	if err != nil {
		t.Fatal(err)
	}
	c := &cloud{sim: sim, backend: b}
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	if c.compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		t.Fatal(err)
	}
	if c.network, err = openstack.NewNetworkV2(pc, eo); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServerIsAHost boots a server from user-data, reaches it over SSH at its floating IP with
// the host key the console printed, and follows it through stop, start and delete.
func TestServerIsAHost(t *testing.T) {
	c := startCloud(t, "hoststest")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	netID, _ := c.sim.AddNetwork("vmnet", "10.241.7.0/24", false)
	var pub string
	for _, n := range c.sim.Networks() {
		if n.External {
			pub = n.ID
		}
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	userData := fmt.Sprintf(`#cloud-config
ssh_authorized_keys:
  - %s
write_files:
  - path: /etc/slipway-test
    content: "written by cloud-init\n"
runcmd:
  - [sh, -c, "hostname > /root/runcmd-hostname"]
`, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))))

	start := time.Now()
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: "VM one", ImageRef: c.sim.Images()[0].ID,
		FlavorRef: "3", Networks: []servers.Network{{UUID: netID}}, UserData: []byte(userData)}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ctx, c, srv.ID, "ACTIVE")
	t.Logf("ACTIVE after %s", time.Since(start).Round(time.Millisecond))
	port := c.sim.Ports()[0]
	fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub, PortID: port.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}

	// The console shows the boot, cloud-init's run and the host keys it generated.
	var hostKey ssh.PublicKey
	poll(t, ctx, "cloud-init's host keys on the console", func() bool {
		out, err := servers.ShowConsoleOutput(ctx, c.compute, srv.ID, servers.ShowConsoleOutputOpts{Length: -1}).Extract()
		if err != nil {
			return false
		}
		hostKey = consoleHostKey(out)
		return hostKey != nil
	})
	client := dialSSH(t, ctx, fip.FloatingIP, signer, hostKey)
	t.Logf("SSH at the floating IP after %s", time.Since(start).Round(time.Millisecond))
	if out := run(t, client, "cloud-init status --wait"); !strings.Contains(out, "done") {
		t.Errorf("cloud-init status: %q", out)
	}
	t.Logf("cloud-init done after %s", time.Since(start).Round(time.Millisecond))
	for cmd, want := range map[string]string{
		"cat /etc/slipway-test":                  "written by cloud-init",
		"sudo cat /root/runcmd-hostname":         "vm-one",
		"hostname":                               "vm-one",
		"ip -4 -o addr show | grep -c 10.241.7.": "1",
	} {
		if got := run(t, client, cmd); strings.TrimSpace(got) != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
	// A host reaches a floating IP too (here its own, the hardest case for NAT): clusters reach
	// their API through a load balancer's floating IP.
	if got := run(t, client, "timeout 5 bash -c 'exec 3<>/dev/tcp/"+fip.FloatingIP+"/22 && head -c 4 <&3'"); got != "SSH-" {
		t.Errorf("from the host to its own floating IP: %q, want an SSH banner", got)
	}
	client.Close()

	// Stop and start keep the disk.
	if err := servers.Stop(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ctx, c, srv.ID, "SHUTOFF")
	if state := containerState(t, srv.ID); state != "exited" {
		t.Errorf("host of a SHUTOFF server is %q", state)
	}
	if err := servers.Start(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ctx, c, srv.ID, "ACTIVE")
	client = dialSSH(t, ctx, fip.FloatingIP, signer, hostKey)
	if got := run(t, client, "cat /etc/slipway-test"); !strings.Contains(got, "written by cloud-init") {
		t.Errorf("the disk did not survive a stop and start: %q", got)
	}
	client.Close()

	// Delete takes the host, its volume and its port; the floating IP stays until deleted.
	if err := servers.Delete(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "server gone", func() bool {
		_, err := servers.Get(ctx, c.compute, srv.ID).Extract()
		return gophercloud.ResponseCodeIs(err, 404)
	})
	if state := containerState(t, srv.ID); state != "" {
		t.Errorf("the deleted server's host is still there: %q", state)
	}
	if n := len(c.sim.Ports()); n != 0 {
		t.Errorf("%d ports left", n)
	}
	if err := floatingips.Delete(ctx, c.network, fip.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
}

// consoleHostKey finds the ed25519 host key cloud-init prints between its BEGIN and END markers.
func consoleHostKey(console string) ssh.PublicKey {
	m := regexp.MustCompile(`(?s)-----BEGIN SSH HOST KEY KEYS-----(.*?)-----END SSH HOST KEY KEYS-----`).FindStringSubmatch(console)
	if m == nil {
		return nil
	}
	for _, line := range strings.Split(m[1], "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "ssh-ed25519 ") {
			k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(line)))
			if err == nil {
				return k
			}
		}
	}
	return nil
}

func dialSSH(t *testing.T, ctx context.Context, addr string, signer ssh.Signer, hostKey ssh.PublicKey) *ssh.Client {
	t.Helper()
	cfg := &ssh.ClientConfig{User: "debian", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), HostKeyAlgorithms: []string{hostKey.Type()}, Timeout: 5 * time.Second}
	var client *ssh.Client
	var err error
	deadline := time.Now().Add(time.Minute)
	for {
		if client, err = ssh.Dial("tcp", net.JoinHostPort(addr, "22"), cfg); err == nil {
			return client
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Say what the host was doing: its units and the tail of its journal.
	out, _ := exec.Command("sh", "-c", "docker ps -q --filter label="+hosts.Label+" | xargs -r -I{} docker exec {} sh -c "+
		"'hostname; systemctl is-system-running; systemctl --failed --no-legend; journalctl -b --no-pager -n 40'").CombinedOutput()
	t.Fatalf("ssh to %s: %v\n%s", addr, err, out)
	return nil
}

func run(t *testing.T, c *ssh.Client, cmd string) string {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.CombinedOutput(cmd)
	if err != nil {
		t.Errorf("%s: %v: %s", cmd, err, out)
	}
	return strings.TrimSpace(string(out))
}

func containerState(t *testing.T, serverID string) string {
	t.Helper()
	out, err := sandboxapi.Docker(context.Background(), "ps", "-a", "--filter", "label=dev.slipway.openstack.server="+serverID, "--format", "{{.State}}")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func waitStatus(t *testing.T, ctx context.Context, c *cloud, id, want string) {
	t.Helper()
	var last string
	poll(t, ctx, "status "+want, func() bool {
		s, err := servers.Get(ctx, c.compute, id).Extract()
		if err != nil {
			return false
		}
		if s.Status == "ERROR" {
			t.Fatalf("server %s is in ERROR: %s", id, s.Fault.Message)
		}
		last = s.Status + "/" + s.TaskState
		return s.Status == want && s.TaskState == ""
	})
	_ = last
}

func poll(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
