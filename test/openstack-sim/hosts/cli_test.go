package hosts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// cli runs the real `openstack` client against a simulator.
type cli struct {
	t   *testing.T
	env []string
}

func (c cli) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openstack", args...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func (c cli) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("openstack %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.must(append(args, "-f", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("openstack %s -f json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestOpenStackClientBootsAHost is the user's path through OpenStack in a box with the real
// python-openstackclient and OpenSSH: a keypair, a network behind a router, a server with
// user-data, a floating IP; ssh with the key and the host key the console printed shows what
// cloud-init did; the console log shows the boot; deleting the server leaves no host, port or
// (once released) floating IP. Then the bad input a user meets.
func TestOpenStackClientBootsAHost(t *testing.T) {
	requireDocker(t)
	for _, bin := range []string{"openstack", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true, and %s is missing (make ci-deps installs it)", bin)
			}
			t.Skipf("%s is missing: apt-get install python3-openstackclient openssh-client", bin)
		}
	}
	ctx := context.Background()
	const name = "clitest"
	b, err := hosts.New(ctx, hosts.Options{Name: name, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	sim := openstacktest.New(openstacktest.Options{Hypervisor: b})
	t.Cleanup(func() {
		sim.Close()
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
	})
	dir := t.TempDir()
	c := cli{t: t, env: append(os.Environ(), "OS_AUTH_URL="+sim.AuthURL(), "OS_IDENTITY_API_VERSION=3",
		"OS_REGION_NAME="+sim.Region(), "OS_USERNAME="+openstacktest.Username, "OS_PASSWORD="+openstacktest.Password,
		"OS_USER_DOMAIN_NAME="+openstacktest.DomainName, "OS_PROJECT_DOMAIN_NAME="+openstacktest.DomainName,
		"OS_PROJECT_NAME="+openstacktest.ProjectName, "OS_CLOUD=", "HOME="+dir)}

	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	c.must("keypair", "create", "--public-key", key+".pub", "k1")
	c.must("network", "create", "n1")
	c.must("subnet", "create", "--network", "n1", "--subnet-range", "10.243.0.0/24", "s1")
	c.must("router", "create", "r1")
	c.must("router", "set", "--external-gateway", "public", "r1")
	c.must("router", "add", "subnet", "r1", "s1")
	userData := filepath.Join(dir, "user-data.yaml")
	if err := os.WriteFile(userData, []byte(`#cloud-config
write_files:
  - path: /etc/from-user-data
    content: "hello from user-data\n"
runcmd:
  - [sh, -c, "echo runcmd ran > /var/tmp/runcmd"]
`), 0o600); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	var srv struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	c.json(&srv, "server", "create", "--image", "debian-12", "--flavor", "m1.small", "--network", "n1",
		"--key-name", "k1", "--user-data", userData, "--wait", "vm1")
	if srv.Status != "ACTIVE" {
		t.Fatalf("server create --wait: status %q", srv.Status)
	}
	t.Logf("ACTIVE after %s", time.Since(start).Round(time.Millisecond))
	var fip struct {
		Address string `json:"floating_ip_address"`
	}
	c.json(&fip, "floating", "ip", "create", "public")
	c.must("server", "add", "floating", "ip", "vm1", fip.Address)

	// The console log is the first thing a user reads: it shows the boot and cloud-init, and
	// the host keys to check the first SSH connection against.
	var console string
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(console, " finished at ") {
		if time.Now().After(deadline) {
			t.Fatalf("cloud-init did not finish within 2 minutes; console:\n%s", console)
		}
		time.Sleep(500 * time.Millisecond)
		console, _ = c.run("console", "log", "show", "vm1")
	}
	for _, want := range []string{"Reached target", "Cloud-init v. 22", "-----BEGIN SSH HOST KEY KEYS-----"} {
		if !strings.Contains(console, want) {
			t.Errorf("console log lacks %q", want)
		}
	}
	hostKey := regexp.MustCompile(`(?m)^ssh-ed25519 \S+`).FindString(console)
	if hostKey == "" {
		t.Fatalf("no ed25519 host key on the console:\n%s", console)
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(knownHosts, []byte(fip.Address+" "+hostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ssh := func(cmd string) string {
		t.Helper()
		out, err := exec.Command("ssh", "-i", key, "-o", "UserKnownHostsFile="+knownHosts, "-o", "StrictHostKeyChecking=yes",
			"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "debian@"+fip.Address, cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh debian@%s %s: %v\n%s", fip.Address, cmd, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := ssh("cat /etc/from-user-data /var/tmp/runcmd && hostname && cloud-init status"); got != "hello from user-data\nruncmd ran\nvm1\nstatus: done" {
		t.Errorf("what cloud-init did, seen over ssh:\n%s", got)
	}
	t.Logf("cloud-init verified over ssh after %s", time.Since(start).Round(time.Millisecond))

	c.must("server", "delete", "--wait", "vm1")
	if out, _ := sandboxapi.Docker(ctx, "ps", "-aq", "--filter", "label="+hosts.Label+"="+name, "--filter", "label=dev.slipway.openstack.server="+srv.ID); out != "" {
		t.Errorf("server delete --wait returned, and its host is still there: %s", out)
	}
	for _, p := range sim.Ports() {
		if p.DeviceID == srv.ID {
			t.Errorf("port %s of the deleted server is left", p.ID)
		}
	}
	c.must("floating", "ip", "delete", fip.Address)
	if n := len(sim.FloatingIPs()); n != 0 {
		t.Errorf("%d floating IPs left", n)
	}
	if fi := openstacktestFIPsInNAT(t, name); fi != 0 {
		t.Errorf("%d floating IP rules left in the NAT chain", fi)
	}

	t.Run("bad input", func(t *testing.T) { badInput(t, c, sim, userData) })

	c.must("router", "remove", "subnet", "r1", "s1")
	c.must("router", "delete", "r1")
	c.must("network", "delete", "n1")
}

func badInput(t *testing.T, c cli, sim *openstacktest.Sim, userData string) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown image", []string{"--image", "no-such-image", "--flavor", "m1.small", "--network", "n1"}, "No Image found for no-such-image"},
		{"unknown flavor", []string{"--image", "debian-12", "--flavor", "m9.huge", "--network", "n1"}, "No flavor with a name or ID of 'm9.huge' exists"},
		{"unknown network", []string{"--image", "debian-12", "--flavor", "m1.small", "--network", "nowhere"}, "No Network found for nowhere"},
		{"unknown keypair", []string{"--image", "debian-12", "--flavor", "m1.small", "--network", "n1", "--key-name", "nokey"}, "Invalid key_name provided"},
		{"image bigger than the flavor's disk", []string{"--image", "ubuntu-24.04", "--flavor", "m1.tiny", "--network", "n1"}, "Flavor's disk is too small for requested image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.run(append(append([]string{"server", "create"}, tc.args...), "bad")...)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("want a failure saying %q, got err %v:\n%s", tc.want, err, out)
			}
		})
	}
	t.Run("over quota", func(t *testing.T) {
		sim.SetQuota(openstacktest.Quota{Instances: 1})
		defer sim.SetQuota(openstacktest.Quota{})
		c.must("server", "create", "--image", "debian-12", "--flavor", "m1.small", "--network", "n1", "--wait", "q1")
		out, err := c.run("server", "create", "--image", "debian-12", "--flavor", "m1.small", "--network", "n1", "q2")
		if err == nil || !strings.Contains(out, "Quota exceeded for instances") || !strings.Contains(out, "HTTP 403") {
			t.Errorf("second server over a quota of 1: want HTTP 403 Quota exceeded for instances, got %v:\n%s", err, out)
		}
		c.must("server", "delete", "--wait", "q1")
	})
	t.Run("user-data that is not cloud-config", func(t *testing.T) {
		// Nova does not read user-data: the server boots, and cloud-init says on the console
		// what it could not use.
		bad := filepath.Join(filepath.Dir(userData), "bad.yaml")
		if err := os.WriteFile(bad, []byte("#cloud-config\nwrite_files: [this is: not: valid\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c.must("server", "create", "--image", "debian-12", "--flavor", "m1.small", "--network", "n1", "--user-data", bad, "--wait", "baddata")
		deadline := time.Now().Add(2 * time.Minute)
		var console string
		for !strings.Contains(console, " finished at ") && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
			console, _ = c.run("console", "log", "show", "baddata")
		}
		if !strings.Contains(console, "Failed loading yaml blob") && !strings.Contains(console, "Invalid cloud-config") {
			t.Errorf("console does not say the user-data was invalid:\n%s", console)
		}
		c.must("server", "delete", "--wait", "baddata")
	})
	// Whatever failed above, every server has its host and every host its server.
	servers := 0
	for _, s := range sim.Servers() {
		if s.Status == "ACTIVE" {
			servers++
		}
	}
	out, err := sandboxapi.Docker(context.Background(), "ps", "-q", "--filter", "label=dev.slipway.openstack=clitest", "--filter", "label=dev.slipway.openstack.server")
	if err != nil {
		t.Fatal(err)
	}
	if hosts := len(sandboxapi.Lines(out)); hosts != servers {
		t.Errorf("%d running hosts for %d ACTIVE servers", hosts, servers)
	}
}

// openstacktestFIPsInNAT counts the DNAT rules in the cloud's floating IP chain.
func openstacktestFIPsInNAT(t *testing.T, cloud string) int {
	out, err := exec.Command("iptables", "-t", "nat", "-S", "SLIPWAY-OS-"+strings.ToUpper(cloud)+"-DNAT").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables: %v %s", err, out)
	}
	return strings.Count(string(out), "-j DNAT")
}
