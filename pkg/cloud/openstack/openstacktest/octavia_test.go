package openstacktest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// lbClient is an Octavia client found the way every gophercloud user finds it: through the
// catalog and the service's version discovery.
func lbClient(t *testing.T, sim *openstacktest.Sim) *gophercloud.ServiceClient {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(context.Background(), passwordAuth(sim))
	if err != nil {
		t.Fatalf("authenticating: %v", err)
	}
	c, err := openstack.NewLoadBalancerV2(pc, gophercloud.EndpointOpts{Region: sim.Region()})
	if err != nil {
		t.Fatalf("load-balancer client: %v", err)
	}
	return c
}

func waitLB(t *testing.T, c *gophercloud.ServiceClient, id, want string) *loadbalancers.LoadBalancer {
	t.Helper()
	var lb *loadbalancers.LoadBalancer
	waitFor(t, "load balancer "+want, func() bool {
		var err error
		lb, err = loadbalancers.Get(context.Background(), c, id).Extract()
		if want == "DELETED" {
			return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
		}
		return err == nil && lb.ProvisioningStatus == want
	})
	return lb
}

func subnetOf(t *testing.T, sim *openstacktest.Sim, network string) openstacktest.Subnet {
	t.Helper()
	n := findNetwork(t, sim, network)
	for _, sn := range sim.Subnets() {
		if sn.ID == n.SubnetIDs[0] {
			return sn
		}
	}
	t.Fatalf("network %s has no subnet", network)
	return openstacktest.Subnet{}
}

func TestOctaviaVersionDiscovery(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	// The root answers without a token, with every v2 minor version, the newest CURRENT.
	resp, err := http.Get(sim.URL() + "/load-balancer/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Versions []struct {
			ID, Status string
			Links      []struct{ Href, Rel string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /load-balancer/: %d %v", resp.StatusCode, err)
	}
	last := doc.Versions[len(doc.Versions)-1]
	if doc.Versions[0].ID != "v2.0" || last.Status != "CURRENT" || last.Links[0].Href != sim.URL()+"/load-balancer/v2" {
		t.Errorf("version document %+v", doc.Versions)
	}
	c := lbClient(t, sim)
	if c.ResourceBase != sim.URL()+"/load-balancer/v2.0/" {
		t.Errorf("resource base %s", c.ResourceBase)
	}
	if _, err := loadbalancers.List(c, nil).AllPages(context.Background()); err != nil {
		t.Fatalf("listing through the discovered endpoint: %v", err)
	}
}

// TestOctaviaLifecycle builds the API load balancer of terraform/openstack step by step,
// waiting for ACTIVE after each change as the clients do, then takes it apart again.
func TestOctaviaLifecycle(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c, net := lbClient(t, sim), connect(t, sim, passwordAuth(sim)).network
	sn := subnetOf(t, sim, "private")
	adminUp := true

	lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{Name: "api", VipSubnetID: sn.ID,
		AdminStateUp: &adminUp, Tags: []string{"slipway"}}).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if lb.ProvisioningStatus != "PENDING_CREATE" || lb.OperatingStatus != "OFFLINE" || lb.Provider != "amphora" {
		t.Errorf("new load balancer: %s/%s from %q, want PENDING_CREATE/OFFLINE from amphora", lb.ProvisioningStatus, lb.OperatingStatus, lb.Provider)
	}
	if a, err := netip.ParseAddr(lb.VipAddress); err != nil || !netip.MustParsePrefix(sn.CIDR).Contains(a) || lb.VipNetworkID != sn.NetworkID {
		t.Errorf("VIP %s on %s, want an address of %s", lb.VipAddress, lb.VipNetworkID, sn.CIDR)
	}
	vip, err := ports.Get(ctx, net, lb.VipPortID).Extract()
	if err != nil || vip.DeviceOwner != "Octavia" || vip.Name != "octavia-lb-"+lb.ID || vip.FixedIPs[0].IPAddress != lb.VipAddress {
		t.Fatalf("VIP port %+v, %v", vip, err)
	}
	lb = waitLB(t, c, lb.ID, "ACTIVE")
	if lb.OperatingStatus != "ONLINE" || !slices.Equal(lb.Tags, []string{"slipway"}) {
		t.Errorf("active load balancer: %s, tags %v", lb.OperatingStatus, lb.Tags)
	}

	l, err := listeners.Create(ctx, c, listeners.CreateOpts{Name: "api", LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP,
		ProtocolPort: 6443, AllowedCIDRs: []string{"0.0.0.0/0"}}).Extract()
	if err != nil || l.ProvisioningStatus != "PENDING_CREATE" || l.Loadbalancers[0].ID != lb.ID {
		t.Fatalf("listener: %+v, %v", l, err)
	}
	if got := waitLB(t, c, lb.ID, "ACTIVE"); len(got.Listeners) != 1 || got.Listeners[0].ID != l.ID {
		t.Errorf("load balancer lists listeners %+v", got.Listeners)
	}
	l, _ = listeners.Get(ctx, c, l.ID).Extract()
	if l.ProvisioningStatus != "ACTIVE" || l.ConnLimit != -1 || l.TimeoutClientData != 50000 || l.ClientAuthentication != "NONE" {
		t.Errorf("listener defaults: %+v", l)
	}

	p, err := pools.Create(ctx, c, pools.CreateOpts{Name: "api", ListenerID: l.ID, Protocol: pools.ProtocolTCP,
		LBMethod: pools.LBMethodRoundRobin}).Extract()
	if err != nil || p.Loadbalancers[0].ID != lb.ID {
		t.Fatalf("pool: %+v, %v", p, err)
	}
	waitLB(t, c, lb.ID, "ACTIVE")
	if l, _ = listeners.Get(ctx, c, l.ID).Extract(); l.DefaultPoolID != p.ID {
		t.Errorf("listener default pool %q, want %s", l.DefaultPoolID, p.ID)
	}

	// A member is an address: the port behind it may go, the member stays, as in Octavia.
	port, err := ports.Create(ctx, net, ports.CreateOpts{NetworkID: sn.NetworkID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var members []*pools.Member
	for _, addr := range []string{port.FixedIPs[0].IPAddress, "10.0.9.9"} {
		m, err := pools.CreateMember(ctx, c, p.ID, pools.CreateMemberOpts{Address: addr, ProtocolPort: 6443, SubnetID: sn.ID}).Extract()
		if err != nil {
			t.Fatalf("member %s: %v", addr, err)
		}
		members = append(members, m)
		waitLB(t, c, lb.ID, "ACTIVE")
	}
	if m, _ := pools.GetMember(ctx, c, p.ID, members[0].ID).Extract(); m.OperatingStatus != "NO_MONITOR" || m.Weight != 1 {
		t.Errorf("member without a monitor: %s, weight %d", m.OperatingStatus, m.Weight)
	}
	if err := ports.Delete(ctx, net, port.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}

	hm, err := monitors.Create(ctx, c, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeHTTPS, Delay: 5, Timeout: 3,
		MaxRetries: 2, URLPath: "/readyz", ExpectedCodes: "200"}).Extract()
	if err != nil || hm.HTTPMethod != "GET" || hm.MaxRetriesDown != 3 || hm.Pools[0].ID != p.ID {
		t.Fatalf("monitor: %+v, %v", hm, err)
	}
	waitLB(t, c, lb.ID, "ACTIVE")
	if p, _ = pools.Get(ctx, c, p.ID).Extract(); p.MonitorID != hm.ID || len(p.Members) != 2 || p.Listeners[0].ID != l.ID {
		t.Errorf("pool %+v", p)
	}
	if m, _ := pools.GetMember(ctx, c, p.ID, members[0].ID).Extract(); m.OperatingStatus != "ONLINE" {
		t.Errorf("member of a monitored pool is %s, want ONLINE", m.OperatingStatus)
	}
	statuses, err := loadbalancers.GetStatuses(ctx, c, lb.ID).Extract()
	if err != nil || len(statuses.Loadbalancer.Listeners[0].Pools[0].Members) != 2 || statuses.Loadbalancer.Listeners[0].Pools[0].Monitor.ID != hm.ID {
		t.Errorf("status tree %+v, %v", statuses, err)
	}

	// The VIP port is a normal port: a floating IP goes on it.
	fip, err := floatingips.Create(ctx, net, floatingips.CreateOpts{FloatingNetworkID: findNetwork(t, sim, "public").ID,
		PortID: lb.VipPortID}).Extract()
	if err != nil || fip.FixedIP != lb.VipAddress {
		t.Fatalf("floating IP on the VIP: %+v, %v", fip, err)
	}

	// Updates go through PENDING_UPDATE and come back as sent.
	name := "api-renamed"
	if _, err := loadbalancers.Update(ctx, c, lb.ID, loadbalancers.UpdateOpts{Name: &name}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := waitLB(t, c, lb.ID, "ACTIVE"); got.Name != name {
		t.Errorf("renamed load balancer is called %q", got.Name)
	}

	// Take it apart in terraform's destroy order.
	steps := []func() error{
		func() error { return monitors.Delete(ctx, c, hm.ID).ExtractErr() },
		func() error { return pools.DeleteMember(ctx, c, p.ID, members[0].ID).ExtractErr() },
		func() error { return pools.DeleteMember(ctx, c, p.ID, members[1].ID).ExtractErr() },
		func() error { return pools.Delete(ctx, c, p.ID).ExtractErr() },
		func() error { return listeners.Delete(ctx, c, l.ID).ExtractErr() },
		func() error { return floatingips.Delete(ctx, net, fip.ID).ExtractErr() },
		func() error { return loadbalancers.Delete(ctx, c, lb.ID, nil).ExtractErr() },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("teardown step %d: %v", i, err)
		}
		if i < len(steps)-1 {
			waitLB(t, c, lb.ID, "ACTIVE")
		}
	}
	waitLB(t, c, lb.ID, "DELETED")
	if lbs := sim.LoadBalancers(); len(lbs) != 0 {
		t.Errorf("left behind: %+v", lbs)
	}
	for _, port := range sim.Ports() {
		if port.ID == lb.VipPortID {
			t.Errorf("VIP port %s outlived its load balancer", port.ID)
		}
	}
}

func TestOctaviaCascadeDelete(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := lbClient(t, sim)
	lb := buildLB(t, sim, c)
	fip := vipFloatingIP(t, sim, lb)

	err := loadbalancers.Delete(ctx, c, lb.ID, nil).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "it has children") {
		t.Fatalf("delete with children without cascade: want Octavia's 400, got %v", err)
	}
	sim.SetLoadBalancerTime(200 * time.Millisecond)
	if err := loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatalf("cascade delete: %v", err)
	}
	if got, _ := loadbalancers.Get(ctx, c, lb.ID).Extract(); got.ProvisioningStatus != "PENDING_DELETE" {
		t.Errorf("deleting load balancer is %s", got.ProvisioningStatus)
	}
	err = loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || !strings.Contains(err.Error(), "Invalid state PENDING_DELETE") {
		t.Errorf("second delete while deleting: want 409, got %v", err)
	}
	waitLB(t, c, lb.ID, "DELETED")
	if lbs := sim.LoadBalancers(); len(lbs) != 0 {
		t.Errorf("left behind: %+v", lbs)
	}
	for _, coll := range []string{"listeners", "pools", "healthmonitors"} {
		if n := countLBObjects(t, c, coll); n != 0 {
			t.Errorf("after the cascade delete GET %s lists %d", coll, n)
		}
	}
	for _, f := range sim.FloatingIPs() {
		if f.ID == fip.ID && f.PortID != "" {
			t.Errorf("floating IP still points at the deleted VIP port %s", f.PortID)
		}
	}
}

// buildLB makes an ACTIVE load balancer on the private subnet with a TCP listener, its pool,
// two members and an HTTPS health monitor.
func buildLB(t *testing.T, sim *openstacktest.Sim, c *gophercloud.ServiceClient) *loadbalancers.LoadBalancer {
	t.Helper()
	ctx := context.Background()
	sn := subnetOf(t, sim, "private")
	lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{Name: "api", VipSubnetID: sn.ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitLB(t, c, lb.ID, "ACTIVE")
	l, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitLB(t, c, lb.ID, "ACTIVE")
	p, err := pools.Create(ctx, c, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodLeastConnections}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	waitLB(t, c, lb.ID, "ACTIVE")
	down := false
	for i, addr := range []string{"10.0.1.10", "10.0.1.11"} {
		opts := pools.CreateMemberOpts{Address: addr, ProtocolPort: 6443}
		if i == 1 {
			opts.AdminStateUp = &down
		}
		if _, err := pools.CreateMember(ctx, c, p.ID, opts).Extract(); err != nil {
			t.Fatal(err)
		}
		waitLB(t, c, lb.ID, "ACTIVE")
	}
	if _, err := monitors.Create(ctx, c, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeHTTPS, Delay: 5, Timeout: 3,
		MaxRetries: 2, URLPath: "/readyz"}).Extract(); err != nil {
		t.Fatal(err)
	}
	return waitLB(t, c, lb.ID, "ACTIVE")
}

// countLBObjects lists an Octavia collection with a plain GET.
func countLBObjects(t *testing.T, c *gophercloud.ServiceClient, collection string) int {
	t.Helper()
	var body map[string][]map[string]any
	if _, err := c.Get(context.Background(), c.ServiceURL("lbaas", collection), &body, nil); err != nil {
		t.Fatalf("GET %s: %v", collection, err)
	}
	return len(body[collection])
}

// vipFloatingIP associates a floating IP of the public network with a load balancer's VIP.
func vipFloatingIP(t *testing.T, sim *openstacktest.Sim, lb *loadbalancers.LoadBalancer) *floatingips.FloatingIP {
	t.Helper()
	fip, err := floatingips.Create(context.Background(), connect(t, sim, passwordAuth(sim)).network, floatingips.CreateOpts{
		FloatingNetworkID: findNetwork(t, sim, "public").ID, PortID: lb.VipPortID}).Extract()
	if err != nil || fip.FixedIP != lb.VipAddress {
		t.Fatalf("floating IP on the VIP: %+v, %v", fip, err)
	}
	return fip
}
