package terraform

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	tfout "github.com/slipway-dev/slipway/pkg/terraform"
)

// checkOutputs reads the outputs as `slipway apply -t <dir>` does and checks them against
// what the simulator holds.
func checkOutputs(ctx context.Context, t *testing.T, sim *openstacktest.Sim, dir string) {
	t.Helper()
	out, err := tfout.Load(ctx, dir, nil)
	if err != nil {
		t.Fatalf("slipway's parser refuses the outputs: %v", err)
	}
	lbs := sim.LoadBalancers()
	if len(lbs) != 1 {
		t.Fatalf("load balancers after apply: %+v", lbs)
	}
	fipOf := func(portID string) string {
		for _, f := range sim.FloatingIPs() {
			if f.PortID == portID {
				return f.Address
			}
		}
		return "none"
	}
	if api := out.API; api == nil || api.Endpoint != fipOf(lbs[0].VIPPortID)+":6443" || !slices.Equal(api.AlternativeNames, []string{lbs[0].VIPAddress}) {
		t.Errorf("slipway_api %+v, want the VIP %s behind its floating IP", out.API, lbs[0].VIPAddress)
	}
	var addrs, names []string
	bastion := "none"
	for _, srv := range sim.Servers() {
		port := portOf(sim, srv.PortIDs)
		switch {
		case strings.HasPrefix(srv.Name, "sim-cp-"):
			addrs, names = append(addrs, port.FixedIPs[0].IPAddress), append(names, srv.Name)
		case srv.Name == "sim-bastion":
			bastion = fipOf(port.ID)
		}
	}
	slices.Sort(names)
	// The control planes have private addresses only: slipway reaches them through the bastion.
	cp := out.ControlPlane
	if cp == nil || cp.ClusterName != "sim" || cp.SSHUser != "debian" || cp.Bastion != bastion || len(cp.PublicAddress) != 0 ||
		!sameSet(cp.PrivateAddress, addrs) || !slices.Equal(cp.Hostnames, names) || len(names) != 3 {
		t.Errorf("slipway_hosts control plane %+v; servers sim-cp-* %v at %v, bastion floating IP %s", cp, names, addrs, bastion)
	}
	if pool, ok := out.Workers["pool1"]; !ok || pool.Replicas == nil || *pool.Replicas != 2 {
		t.Errorf("slipway_workers %+v", out.Workers)
	}
}

// checkLoadBalancer checks what terraform built in Octavia: the API listener with its pool of
// the three control-plane servers and the HTTPS /readyz monitor.
func checkLoadBalancer(t *testing.T, sim *openstacktest.Sim) {
	t.Helper()
	lb := sim.LoadBalancers()[0]
	if lb.Name != "sim-api" || lb.ProvisioningStatus != "ACTIVE" || len(lb.Listeners) != 1 || len(lb.Pools) != 1 {
		t.Fatalf("load balancer %+v", lb)
	}
	l, p := lb.Listeners[0], lb.Pools[0]
	if l.Protocol != "TCP" || l.ProtocolPort != 6443 || l.DefaultPoolID != p.ID || !slices.Equal(l.AllowedCIDRs, []string{"0.0.0.0/0"}) {
		t.Errorf("listener %+v", l)
	}
	var servers, members []string
	for _, srv := range sim.Servers() {
		if strings.HasPrefix(srv.Name, "sim-cp-") {
			servers = append(servers, portOf(sim, srv.PortIDs).FixedIPs[0].IPAddress+":6443")
		}
	}
	for _, m := range p.Members {
		members = append(members, fmt.Sprintf("%s:%d", m.Address, m.ProtocolPort))
	}
	if p.LBAlgorithm != "ROUND_ROBIN" || !sameSet(members, servers) {
		t.Errorf("pool %s with members %v, want the control plane %v", p.LBAlgorithm, members, servers)
	}
	if hm := p.Monitor; hm == nil || hm.Type != "HTTPS" || hm.URLPath != "/readyz" || hm.ExpectedCodes != "200" || hm.Delay != 5 || hm.Timeout != 3 || hm.MaxRetries != 2 {
		t.Errorf("health monitor %+v", p.Monitor)
	}
}

func portOf(sim *openstacktest.Sim, ids []string) openstacktest.Port {
	for _, p := range sim.Ports() {
		if len(ids) > 0 && p.ID == ids[0] {
			return p
		}
	}
	return openstacktest.Port{FixedIPs: []openstacktest.FixedIP{{IPAddress: "none"}}}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
