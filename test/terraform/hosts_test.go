package terraform

import (
	"context"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	tfout "github.com/slipway-dev/slipway/pkg/terraform"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// cloudName labels the hosts of this test's simulator.
const cloudName = "tfquick"

// checkHosts proves that the infrastructure is real: every server runs as a host, the bastion
// answers SSH at its floating IP with the key from the tfvars and the host key its console
// printed, and every control plane answers SSH through the bastion at its private address, as
// `slipway apply -t` will reach them.
func checkHosts(ctx context.Context, t *testing.T, sim *openstacktest.Sim, dir, keyFile string) {
	t.Helper()
	for _, s := range sim.Servers() {
		out, err := sandboxapi.Docker(ctx, "ps", "-q", "--filter", "label="+hosts.Label+"="+cloudName,
			"--filter", "label="+hosts.Label+".server="+s.ID)
		if err != nil || out == "" {
			t.Errorf("server %s (%s) has no running host (%v)", s.Name, s.Status, err)
		}
	}
	out, err := tfout.Load(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := out.ControlPlane
	bastionID := ""
	for _, s := range sim.Servers() {
		if strings.HasSuffix(s.Name, "-bastion") {
			bastionID = s.ID
		}
	}
	hostKey := consoleHostKey(ctx, t, sim, bastionID)
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ClientConfig{User: cp.SSHUser, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), HostKeyAlgorithms: []string{hostKey.Type()}, Timeout: 5 * time.Second}
	var bastion *ssh.Client
	addr := net.JoinHostPort(cp.Bastion, "22")
	deadline := time.Now().Add(2 * time.Minute)
	for bastion, err = ssh.Dial("tcp", addr, cfg); err != nil; bastion, err = ssh.Dial("tcp", addr, cfg) {
		if time.Now().After(deadline) {
			t.Fatalf("ssh %s@%s (the bastion's floating IP): %v", cp.SSHUser, addr, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	defer bastion.Close()
	addrs := cp.PrivateAddress
	if len(addrs) == 0 {
		addrs = cp.PublicAddress
	}
	for _, a := range addrs {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			conn, err := bastion.Dial("tcp", net.JoinHostPort(a, "22"))
			if err == nil {
				buf := make([]byte, 4)
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _ := conn.Read(buf)
				conn.Close()
				if string(buf[:n]) == "SSH-" {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("control plane %s does not answer SSH through the bastion: %v", a, err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

// consoleHostKey waits for the ed25519 host key cloud-init prints on a server's console.
func consoleHostKey(ctx context.Context, t *testing.T, sim *openstacktest.Sim, id string) ssh.PublicKey {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
		Username: openstacktest.Username, Password: openstacktest.Password,
		DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName})
	if err != nil {
		t.Fatal(err)
	}
	compute, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^ssh-ed25519 \S+`)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		console, err := servers.ShowConsoleOutput(ctx, compute, id, servers.ShowConsoleOutputOpts{Length: -1}).Extract()
		if err == nil && strings.Contains(console, "-----END SSH HOST KEY KEYS-----") {
			if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(re.FindString(console))); err == nil {
				return k
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no host key on the console of server %s: %v\n%s", id, err, tail(console, 4<<10))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
