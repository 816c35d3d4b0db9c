package openstacktest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func wantErr(t *testing.T, what string, err error, status int, text string) {
	t.Helper()
	if !gophercloud.ResponseCodeIs(err, status) || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: want %d with %q, got %v", what, status, text, err)
	}
}

// TestOctaviaImmutableWhilePending checks Octavia's rule that nothing changes a load balancer
// while a change to it is being applied: children get "immutable", the load balancer itself
// names its pending state.
func TestOctaviaImmutableWhilePending(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := lbClient(t, sim)
	sim.SetLoadBalancerTime(time.Second)
	lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipSubnetID: subnetOf(t, sim, "private").ID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	_, err = listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 80}).Extract()
	wantErr(t, "listener on a PENDING_CREATE load balancer", err, http.StatusConflict, "Load Balancer "+lb.ID+" is immutable and cannot be updated.")
	name := "x"
	_, err = loadbalancers.Update(ctx, c, lb.ID, loadbalancers.UpdateOpts{Name: &name}).Extract()
	wantErr(t, "update while PENDING_CREATE", err, http.StatusConflict, "Invalid state PENDING_CREATE of loadbalancer resource "+lb.ID)
	err = loadbalancers.Delete(ctx, c, lb.ID, nil).ExtractErr()
	wantErr(t, "delete while PENDING_CREATE", err, http.StatusConflict, "Invalid state PENDING_CREATE")

	waitLB(t, c, lb.ID, "ACTIVE")
	l, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolHTTP, ProtocolPort: 80}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := loadbalancers.Get(ctx, c, lb.ID).Extract(); got.ProvisioningStatus != "PENDING_UPDATE" {
		t.Errorf("a new listener leaves its load balancer %s, want PENDING_UPDATE", got.ProvisioningStatus)
	}
	_, err = pools.Create(ctx, c, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolHTTP, LBMethod: pools.LBMethodRoundRobin}).Extract()
	wantErr(t, "pool while the listener is created", err, http.StatusConflict, "is immutable and cannot be updated")
	err = listeners.Delete(ctx, c, l.ID).ExtractErr()
	wantErr(t, "listener delete while pending", err, http.StatusConflict, "is immutable")
	waitLB(t, c, lb.ID, "ACTIVE")
	if got, _ := listeners.Get(ctx, c, l.ID).Extract(); got.ProvisioningStatus != "ACTIVE" || got.OperatingStatus != "ONLINE" {
		t.Errorf("settled listener %s/%s", got.ProvisioningStatus, got.OperatingStatus)
	}
}

// TestOctaviaValidation checks the answers to bad requests against Octavia's status codes
// and messages.
func TestOctaviaValidation(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c, net := lbClient(t, sim), connect(t, sim, passwordAuth(sim)).network
	lb := buildLB(t, sim, c)
	l, _ := listeners.Get(ctx, c, lb.Listeners[0].ID).Extract()
	pool, _ := pools.Get(ctx, c, l.DefaultPoolID).Extract()
	sn := subnetOf(t, sim, "private")
	taken := sim.Ports()[0].FixedIPs[0].IPAddress
	free, err := ports.Create(ctx, net, ports.CreateOpts{NetworkID: sn.NetworkID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	raw := func(body map[string]any) error {
		_, err := c.Post(ctx, c.ServiceURL("lbaas", "listeners"), body, nil, nil)
		return err
	}
	for _, tc := range []struct {
		name   string
		do     func() error
		status int
		text   string
	}{
		{"no VIP", func() error {
			_, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{Name: "x"}).Extract()
			return err
		},
			400, "VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id."},
		{"unknown subnet", func() error {
			_, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipSubnetID: "6f0b3c1e-0000-4000-8000-000000000000"}).Extract()
			return err
		}, 400, "Subnet 6f0b3c1e-0000-4000-8000-000000000000 not found."},
		{"VIP address in use", func() error {
			_, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipSubnetID: sn.ID, VipAddress: taken}).Extract()
			return err
		}, 409, "already allocated"},
		{"unknown flavor", func() error {
			_, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipSubnetID: sn.ID, FlavorID: "gold"}).Extract()
			return err
		}, 400, "Invalid flavor_id."},
		{"unknown attribute", func() error { return raw(map[string]any{"listener": map[string]any{"protocol_prt": 1}}) },
			400, "Unknown attribute for argument listener: protocol_prt"},
		{"missing protocol_port", func() error {
			return raw(map[string]any{"listener": map[string]any{"protocol": "TCP", "loadbalancer_id": lb.ID}})
		}, 400, "protocol_port. Value: 'None'. Mandatory field missing."},
		{"bad protocol", func() error {
			return raw(map[string]any{"listener": map[string]any{"protocol": "FTP", "protocol_port": 21, "loadbalancer_id": lb.ID}})
		}, 400, "Value should be one of"},
		{"TLS termination", func() error {
			_, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTerminatedHTTPS,
				ProtocolPort: 443, DefaultTlsContainerRef: "https://barbican/containers/1"}).Extract()
			return err
		}, 501, "Provider 'amphora' does not support a requested option"},
		{"duplicate listener port", func() error {
			_, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443}).Extract()
			return err
		}, 409, "already using protocol TCP and protocol_port 6443"},
		{"allowed CIDR", func() error {
			_, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP,
				ProtocolPort: 22, AllowedCIDRs: []string{"10.0.0.0/33"}}).Extract()
			return err
		}, 400, "CIDR format"},
		{"pool without parent", func() error {
			_, err := pools.Create(ctx, c, pools.CreateOpts{Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
			return err
		}, 400, "Must provide at least one of: loadbalancer_id, listener_id"},
		{"second default pool", func() error {
			_, err := pools.Create(ctx, c, pools.CreateOpts{ListenerID: l.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
			return err
		}, 409, "This listener already has a default pool"},
		{"SOURCE_IP_PORT", func() error {
			_, err := pools.Create(ctx, c, pools.CreateOpts{LoadbalancerID: lb.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodSourceIpPort}).Extract()
			return err
		}, 501, "does not support SOURCE_IP_PORT"},
		{"duplicate member", func() error {
			_, err := pools.CreateMember(ctx, c, pool.ID, pools.CreateMemberOpts{Address: "10.0.1.10", ProtocolPort: 6443}).Extract()
			return err
		}, 409, "Another member on this pool is already using ip 10.0.1.10 on protocol_port 6443"},
		{"member weight", func() error {
			w := 300
			_, err := pools.CreateMember(ctx, c, pool.ID, pools.CreateMemberOpts{Address: "10.0.1.12", ProtocolPort: 1, Weight: &w}).Extract()
			return err
		}, 400, "Value should be lower or equal to 256"},
		{"member of an unknown pool", func() error {
			_, err := pools.CreateMember(ctx, c, "no-such-pool", pools.CreateMemberOpts{Address: "10.0.1.12", ProtocolPort: 1}).Extract()
			return err
		}, 404, "Pool no-such-pool not found."},
		{"second monitor", func() error {
			_, err := monitors.Create(ctx, c, monitors.CreateOpts{PoolID: pool.ID, Type: monitors.TypeTCP, Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
			return err
		}, 409, "This pool already has a health monitor"},
		{"url_path on a TCP monitor", func() error {
			p, err := pools.Create(ctx, c, pools.CreateOpts{LoadbalancerID: lb.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).Extract()
			if err != nil {
				return err
			}
			waitLB(t, c, lb.ID, "ACTIVE")
			_, err = monitors.Create(ctx, c, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeTCP, Delay: 5, Timeout: 3,
				MaxRetries: 2, URLPath: "/healthz"}).Extract()
			return err
		}, 400, "only valid for HTTP and HTTPS health monitors"},
		{"unknown listener", func() error { _, err := listeners.Get(ctx, c, "nope").Extract(); return err }, 404, "Listener nope not found."},
		{"vip_port_id in use", func() error {
			_, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipPortID: lb.VipPortID}).Extract()
			return err
		}, 400, "already in use by device lb-" + lb.ID},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.name, tc.do(), tc.status, tc.text) })
	}

	// A VIP on a port the caller made: the port stays when the load balancer goes.
	own, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{VipPortID: free.ID}).Extract()
	if err != nil || own.VipAddress != free.FixedIPs[0].IPAddress || own.VipSubnetID != sn.ID {
		t.Fatalf("load balancer on the caller's port: %+v, %v", own, err)
	}
	waitLB(t, c, own.ID, "ACTIVE")
	if err := loadbalancers.Delete(ctx, c, own.ID, nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitLB(t, c, own.ID, "DELETED")
	if _, err := ports.Get(ctx, net, free.ID).Extract(); err != nil {
		t.Errorf("the caller's VIP port went with the load balancer: %v", err)
	}
}

func TestOctaviaListFilters(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	ctx := context.Background()
	c := lbClient(t, sim)
	priv := findNetwork(t, sim, "private")
	var ids []string
	for i, tags := range [][]string{{"a"}, {"a", "b"}, {"b"}} {
		lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{Name: "lb" + string(rune('1'+i)),
			VipNetworkID: priv.ID, Tags: tags}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, lb.ID)
	}
	list := func(opts loadbalancers.ListOpts) []string {
		t.Helper()
		pages, err := loadbalancers.List(c, opts).AllPages(ctx)
		if err != nil {
			t.Fatalf("list %+v: %v", opts, err)
		}
		lbs, _ := loadbalancers.ExtractLoadBalancers(pages)
		var out []string
		for _, lb := range lbs {
			out = append(out, lb.Name)
		}
		return out
	}
	lbs := sim.LoadBalancers()
	for _, tc := range []struct {
		name string
		opts loadbalancers.ListOpts
		want string
	}{
		{"all", loadbalancers.ListOpts{}, "lb1 lb2 lb3"},
		{"by name", loadbalancers.ListOpts{Name: "lb2"}, "lb2"},
		{"by VIP port", loadbalancers.ListOpts{VipPortID: lbs[2].VIPPortID}, "lb3"},
		{"by ID", loadbalancers.ListOpts{ID: ids[0]}, "lb1"},
		{"tags", loadbalancers.ListOpts{Tags: []string{"a", "b"}}, "lb2"},
		{"tags-any", loadbalancers.ListOpts{TagsAny: []string{"b"}}, "lb2 lb3"},
		{"not-tags", loadbalancers.ListOpts{TagsNot: []string{"a"}}, "lb3"},
		{"pages of one", loadbalancers.ListOpts{Limit: 1}, "lb1 lb2 lb3"},
		{"sorted", loadbalancers.ListOpts{SortKey: "name", SortDir: "desc"}, "lb3 lb2 lb1"},
	} {
		if got := strings.Join(list(tc.opts), " "); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	_, err := c.Get(ctx, c.ServiceURL("lbaas", "loadbalancers?colour=red"), nil, nil)
	wantErr(t, "unknown filter", err, 400, "One or more arguments are either duplicate or not valid.")
}
