package hosts_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// TestAPIReachableFromServers serves the cloud's API the way `make openstack-up` does, over https
// at this machine's address on the external network, and has a server call it with the CA it
// got in its user-data: controllers running on the cloud's own servers (a cluster's
// machine-controller and cloud-controller-manager) reach it as clients on this machine do.
func TestAPIReachableFromServers(t *testing.T) {
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := hosts.New(ctx, hosts.Options{Name: "apitest", Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	sim := openstacktest.Prepare(openstacktest.Options{Hypervisor: b})
	t.Cleanup(func() {
		sim.Close()
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("closing the backend: %v", err)
		}
	})
	var ext openstacktest.NetworkInfo
	for _, n := range sim.Networks() {
		if n.External {
			ext, _ = sim.NetworkInfo(n.ID)
		}
	}
	ip, err := b.HostAddress(ctx, ext)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.StartTLS(l, ip); err != nil {
		t.Fatal(err)
	}
	pc, err := sim.ProjectClient(ctx)
	if err != nil {
		t.Fatalf("from this machine, with the CA: %v", err)
	}
	compute, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	var private string
	for _, n := range sim.Networks() {
		if n.Name == "private" {
			private = n.ID
		}
	}
	indented := "      " + strings.ReplaceAll(strings.TrimSpace(string(sim.CACert())), "\n", "\n      ")
	userData := fmt.Sprintf(`#cloud-config
write_files:
  - path: /etc/openstack-ca.pem
    content: |
%s
runcmd:
  - [sh, -c, "curl -sS --max-time 10 --cacert /etc/openstack-ca.pem -o /dev/null -w '%%{http_code}' %s > /var/tmp/api.part 2>&1; mv /var/tmp/api.part /var/tmp/api"]
`, indented, sim.AuthURL())
	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "caller", ImageRef: sim.Images()[0].ID, FlavorRef: "2",
		Networks: []servers.Network{{UUID: private}}, UserData: []byte(userData)}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the server's call to "+sim.AuthURL(), func() bool {
		host, err := sandboxapi.Docker(ctx, "ps", "-q", "--filter", "label=dev.slipway.openstack.server="+srv.ID)
		if err != nil || host == "" {
			return false
		}
		out, err := sandboxapi.Docker(ctx, "exec", host, "cat", "/var/tmp/api")
		if err == nil && out != "200" {
			t.Fatalf("the server called %s and got %q", sim.AuthURL(), out)
		}
		return err == nil
	})
}
