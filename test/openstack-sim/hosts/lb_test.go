package hosts_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// TestLoadBalancerIsAProxy puts a server's sshd behind an Octavia load balancer with a TCP
// health monitor and a floating IP on its VIP: this machine reaches the server through it. A
// member whose server stops is taken out by the health check, and deleting the load balancer
// removes its amphora.
func TestLoadBalancerIsAProxy(t *testing.T) {
	c := startCloud(t, "lbtest")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	netID, subnetID := c.sim.AddNetwork("lbnet", "10.241.9.0/24", false)
	var pub string
	for _, n := range c.sim.Networks() {
		if n.External {
			pub = n.ID
		}
	}
	pc := c.compute.ProviderClient
	lbc, err := openstack.NewLoadBalancerV2(pc, gophercloud.EndpointOpts{Region: c.sim.Region()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: "backend", ImageRef: c.sim.Images()[0].ID,
		FlavorRef: "2", Networks: []servers.Network{{UUID: netID}}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ctx, c, srv.ID, "ACTIVE")
	var backendIP string
	for _, p := range c.sim.Ports() {
		if p.DeviceID == srv.ID {
			backendIP = p.FixedIPs[0].IPAddress
		}
	}

	lb, err := loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "ssh", VipSubnetID: subnetID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	active := func() {
		t.Helper()
		poll(t, ctx, "load balancer ACTIVE", func() bool {
			got, err := loadbalancers.Get(ctx, lbc, lb.ID).Extract()
			return err == nil && got.ProvisioningStatus == "ACTIVE"
		})
	}
	active()
	l, err := listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 2222}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	active()
	pool, err := pools.Create(ctx, lbc, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	active()
	if _, err := monitors.Create(ctx, lbc, monitors.CreateOpts{PoolID: pool.ID, Type: monitors.TypeTCP, Delay: 1, Timeout: 1, MaxRetries: 1}).Extract(); err != nil {
		t.Fatal(err)
	}
	active()
	if _, err := pools.CreateMember(ctx, lbc, pool.ID, pools.CreateMemberOpts{Address: backendIP, ProtocolPort: 22, SubnetID: subnetID}).Extract(); err != nil {
		t.Fatal(err)
	}
	active()
	fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: pub, PortID: lb.VipPortID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(fip.FloatingIP, strconv.Itoa(2222))
	poll(t, ctx, "an SSH banner through the load balancer at "+addr, func() bool { return banner(addr) == "SSH-" })

	// A stopped member fails its health check; the amphora then refuses rather than forwards.
	if err := servers.Stop(ctx, c.compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ctx, c, srv.ID, "SHUTOFF")
	poll(t, ctx, "the stopped member out of rotation", func() bool { return banner(addr) == "" })

	if err := loadbalancers.Delete(ctx, lbc, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the amphora removed", func() bool {
		out, err := sandboxapi.Docker(ctx, "ps", "-aq", "--filter", "label=dev.slipway.openstack.loadbalancer="+lb.ID)
		return err == nil && out == ""
	})
}

// banner reads the first four bytes a TCP server sends, "" when it sends nothing or refuses.
func banner(addr string) string {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4)
	n, _ := conn.Read(buf)
	return string(buf[:n])
}
