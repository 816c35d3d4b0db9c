package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func testNetworksAndRouters(t *testing.T, c *cli) {
	var net, subnet, router obj
	c.json(t, &net, "network", "create", "--tag", "cli", "cli-net")
	c.json(t, &subnet, "subnet", "create", "--network", "cli-net", "--subnet-range", "192.168.77.0/24",
		"--dns-nameserver", "192.0.2.53", "--allocation-pool", "start=192.168.77.10,end=192.168.77.20", "cli-subnet")
	if subnet.str("gateway_ip") != "192.168.77.1" || !slices.Equal(strList(subnet["dns_nameservers"]), []string{"192.0.2.53"}) {
		t.Errorf("subnet create: %v", subnet)
	}
	var nets []obj
	c.json(t, &nets, "network", "list", "--tags", "cli")
	if len(nets) != 1 || nets[0].str("Name") != "cli-net" {
		t.Errorf("network list --tags cli: %v", nets)
	}
	var subnets []obj
	c.json(t, &subnets, "subnet", "list", "--network", net.str("id"))
	if len(subnets) != 1 || subnets[0].str("Subnet") != "192.168.77.0/24" {
		t.Errorf("subnet list --network: %v", subnets)
	}
	c.json(t, &router, "router", "create", "cli-router")
	c.ok(t, "router", "set", "--external-gateway", "public", "cli-router")
	c.ok(t, "router", "add", "subnet", "cli-router", "cli-subnet")
	c.json(t, &router, "router", "show", "cli-router")
	gw, _ := router["external_gateway_info"].(map[string]any)
	ifaces, _ := router["interfaces_info"].([]any)
	if gw == nil || len(ifaces) != 1 || ifaces[0].(map[string]any)["ip_address"] != "192.168.77.1" {
		t.Errorf("router show after set and add: %v", router)
	}
	c.fails(t, "still in use", "network", "delete", "cli-net")
	c.ok(t, "router", "remove", "subnet", "cli-router", "cli-subnet")
	c.ok(t, "router", "delete", "cli-router")
	c.json(t, &subnet, "subnet", "show", "cli-subnet")
	c.ok(t, "subnet", "delete", "cli-subnet")
	c.ok(t, "network", "delete", "cli-net")
	c.fails(t, "No Network found for cli-net", "network", "show", "cli-net")
}

func testSecurityGroups(t *testing.T, c *cli) {
	var group, rule obj
	c.json(t, &group, "security", "group", "create", "--description", "web servers", "web")
	if rules, _ := group["rules"].([]any); len(rules) != 2 { // the egress rules of a new group
		t.Errorf("security group create: want 2 default egress rules, got %v", group["rules"])
	}
	c.json(t, &rule, "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "443", "--remote-ip", "0.0.0.0/0", "web")
	if rule.str("protocol") != "tcp" || rule["port_range_min"] != 443.0 || rule.str("remote_ip_prefix") != "0.0.0.0/0" {
		t.Errorf("security group rule create: %v", rule)
	}
	c.fails(t, "Security group rule already exists", "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "443", "--remote-ip", "0.0.0.0/0", "web")
	var fromGroup obj
	c.json(t, &fromGroup, "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "22", "--remote-group", "default", "web")
	if fromGroup.str("remote_group_id") == "" || fromGroup["remote_ip_prefix"] != nil {
		t.Errorf("rule with a remote group: %v", fromGroup)
	}
	var rules []obj
	c.json(t, &rules, "security", "group", "rule", "list", "web")
	if len(rules) != 4 {
		t.Errorf("security group rule list: want 2 egress and 2 ingress rules, got %v", rules)
	}
	c.ok(t, "security", "group", "rule", "delete", rule.str("id"))
	c.json(t, &rules, "security", "group", "rule", "list", "web")
	if len(rules) != 3 {
		t.Errorf("rule list after delete: %v", rules)
	}
	c.ok(t, "security", "group", "delete", "web")
}

// testServers boots a server with a keypair, user data and a network, gives it a floating IP
// and deletes it, checking what the simulator recorded.
func testServers(t *testing.T, c *cli) {
	dir := t.TempDir()
	userData := filepath.Join(dir, "user-data")
	script := "#cloud-config\nruncmd:\n  - [touch, /tmp/cli-was-here]\n"
	if err := os.WriteFile(userData, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok(t, "keypair", "create", "--private-key", filepath.Join(dir, "key.pem"), "vm-key")
	var srv obj
	c.json(t, &srv, "server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--network", "private",
		"--key-name", "vm-key", "--user-data", userData, "--wait", "vm1")
	if srv.str("status") != "ACTIVE" || srv.str("key_name") != "vm-key" {
		t.Fatalf("server create --wait: %v", srv)
	}
	id := srv.str("id")
	if got, ok := c.sim.Server(id); !ok || string(got.UserData) != script || len(got.PortIDs) != 1 {
		t.Errorf("the simulator's server: %+v", got)
	}
	var list []obj
	c.json(t, &list, "server", "list")
	if len(list) != 1 || list[0].str("Name") != "vm1" || list[0].str("Image") != "cirros" || list[0].str("Flavor") != "m1.tiny" {
		t.Errorf("server list: %v", list)
	}
	var ports []obj
	c.json(t, &ports, "port", "list", "--server", id)
	if len(ports) != 1 {
		t.Fatalf("port list --server: %v", ports)
	}
	var fip obj
	c.json(t, &fip, "floating", "ip", "create", "public")
	c.ok(t, "floating", "ip", "set", "--port", ports[0].str("ID"), fip.str("id"))
	c.json(t, &srv, "server", "show", "vm1")
	addrs, _ := srv["addresses"].(map[string]any)
	if !slices.Contains(strList(addrs["private"]), fip.str("floating_ip_address")) {
		t.Errorf("server show: addresses %v lack the floating IP %s", addrs, fip.str("floating_ip_address"))
	}
	c.ok(t, "floating", "ip", "unset", "--port", fip.str("id"))
	c.json(t, &fip, "floating", "ip", "show", fip.str("id"))
	if fip["port_id"] != nil || fip.str("status") != "DOWN" {
		t.Errorf("floating ip after unset: %v", fip)
	}
	c.ok(t, "floating", "ip", "delete", fip.str("id"))
	var vol obj
	c.json(t, &vol, "volume", "create", "--size", "1", "vm1-data")
	waitVolume(t, c.sim, vol.str("id"), "available") // as a user waits for Cinder before attaching
	c.ok(t, "server", "add", "volume", "vm1", vol.str("id"))
	c.json(t, &vol, "volume", "show", vol.str("id"))
	if vol.str("status") != "in-use" {
		t.Errorf("volume show after server add volume: %v", vol)
	}
	c.ok(t, "server", "remove", "volume", "vm1", vol.str("id"))
	c.ok(t, "volume", "delete", vol.str("id"))
	c.ok(t, "server", "delete", "--wait", "vm1")
	if _, ok := c.sim.Server(id); ok || len(c.sim.Ports()) != 0 || len(c.sim.FloatingIPs()) != 0 {
		t.Errorf("after server delete --wait: server left %v, ports %v, floating IPs %v", ok, c.sim.Ports(), c.sim.FloatingIPs())
	}
	c.ok(t, "keypair", "delete", "vm-key")
}

// TestOpenStackCLIRefusals checks that Nova's refusals reach the user with OpenStack's
// messages, on a simulator of its own because it changes the quota.
func TestOpenStackCLIRefusals(t *testing.T) {
	c := newCLI(t, openstackCLI(t), openstacktest.Options{})
	create := func(extra ...string) []string {
		args := map[string]string{"--image": "cirros", "--flavor": "m1.tiny", "--network": "private"}
		for i := 0; i+1 < len(extra); i += 2 {
			args[extra[i]] = extra[i+1]
		}
		out := []string{"server", "create"}
		for _, k := range []string{"--image", "--flavor", "--network", "--key-name"} {
			if v, ok := args[k]; ok {
				out = append(out, k, v)
			}
		}
		return append(out, "refused")
	}
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"unknown image", "No Image found for nope", create("--image", "nope")},
		{"unknown flavor", "No flavor with a name or ID of 'nope' exists.", create("--flavor", "nope")},
		{"unknown network", "No Network found for nope", create("--network", "nope")},
		{"unknown keypair", "Invalid key_name provided. (HTTP 400)", create("--key-name", "nope")},
		{"image bigger than the flavor", "Flavor's disk is too small for requested image. Flavor disk is 1073741824 bytes, minimum size is 10737418240 bytes. (HTTP 400)",
			create("--image", "ubuntu-24.04")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c.fails(t, tc.want, tc.args...)
		})
	}
	t.Run("over quota", func(t *testing.T) {
		t.Parallel()
		c.sim.SetQuota(openstacktest.Quota{Cores: 1})
		c.fails(t, "Quota exceeded for cores: Requested 2, but already used 0 of 1 cores (HTTP 403)", create("--flavor", "m1.medium")...)
	})
	t.Cleanup(func() {
		if n := len(c.sim.Servers()); n != 0 {
			t.Errorf("refused creates left %d servers", n)
		}
	})
}

// waitVolume waits until the simulator holds the volume in the given status.
func waitVolume(t *testing.T, sim *openstacktest.Sim, id, status string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, v := range sim.Volumes() {
			if v.ID == id && v.Status == status {
				return
			}
		}
	}
	t.Fatalf("volume %s did not become %s within 10s: %+v", id, status, sim.Volumes())
}

// strList reads a JSON list of strings.
func strList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
