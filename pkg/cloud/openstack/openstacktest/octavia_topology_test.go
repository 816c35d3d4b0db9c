package openstacktest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func (r *recorder) loadBalancers() []openstacktest.LoadBalancerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]openstacktest.LoadBalancerInfo(nil), r.topology.LoadBalancers...)
}

// TestOctaviaTopology checks what a hypervisor is told to run for a load balancer: its VIP on
// its network, each listener with the members and monitor of its default pool, and the
// floating IP that leads to the VIP; and that it is told again when the load balancer goes.
func TestOctaviaTopology(t *testing.T) {
	hv := newRecorder()
	sim := openstacktest.New(openstacktest.Options{Hypervisor: hv})
	defer sim.Close()
	ctx := context.Background()
	c := lbClient(t, sim)
	lb := buildLB(t, sim, c)
	fip := vipFloatingIP(t, sim, lb)
	sn := subnetOf(t, sim, "private")
	waitFor(t, "the load balancer in the topology", func() bool {
		lbs := hv.loadBalancers()
		return len(lbs) == 1 && len(lbs[0].Listeners) == 1 && lbs[0].Listeners[0].Monitor != nil
	})
	got := hv.loadBalancers()[0]
	if got.ID != lb.ID || got.VIP != lb.VipAddress || got.VIPPortID != lb.VipPortID || !got.AdminUp ||
		got.Network.ID != sn.NetworkID || got.Network.CIDR != sn.CIDR || got.Network.Gateway != sn.GatewayIP {
		t.Errorf("load balancer in the topology: %+v", got)
	}
	l := got.Listeners[0]
	if l.Protocol != "TCP" || l.Port != 6443 || l.Method != "LEAST_CONNECTIONS" || !l.AdminUp || len(l.Members) != 2 {
		t.Fatalf("listener in the topology: %+v", l)
	}
	if m := l.Members; m[0].Address != "10.0.1.10" || m[0].Port != 6443 || m[0].Weight != 1 || !m[0].AdminUp || m[1].AdminUp {
		t.Errorf("members in the topology: %+v", m)
	}
	if hm := l.Monitor; hm.Type != "HTTPS" || hm.URLPath != "/readyz" || hm.ExpectedCodes != "200" || hm.Delay != 5 || hm.Timeout != 3 || hm.MaxRetries != 2 {
		t.Errorf("monitor in the topology: %+v", hm)
	}
	waitFor(t, "the floating IP of the VIP in the topology", func() bool {
		f := hv.floating()
		return len(f) == 1 && f[0].Address == fip.FloatingIP && f[0].FixedIP == lb.VipAddress
	})

	if err := loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the load balancer and its floating IP out of the topology", func() bool {
		return len(hv.loadBalancers()) == 0 && len(hv.floating()) == 0
	})
}

// TestOctaviaControlState checks that another process sees the load balancers through the
// control API, and can set how long changes stay pending.
func TestOctaviaControlState(t *testing.T) {
	sim := openstacktest.New(openstacktest.Options{})
	defer sim.Close()
	c := lbClient(t, sim)
	lb := buildLB(t, sim, c)
	resp, err := http.Get(sim.URL() + "/_sim/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st openstacktest.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if len(st.LoadBalancers) != 1 || st.LoadBalancers[0].ID != lb.ID || len(st.LoadBalancers[0].Pools[0].Members) != 2 ||
		st.LoadBalancers[0].Pools[0].Monitor == nil {
		t.Fatalf("state's load balancers: %+v", st.LoadBalancers)
	}
	req, _ := http.NewRequest(http.MethodPut, sim.URL()+"/_sim/timing", strings.NewReader(`{"LoadBalancerTime":"1h"}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT /_sim/timing: %v %v", resp, err)
	}
	name := "slow"
	if _, err := loadbalancers.Update(context.Background(), c, lb.ID, loadbalancers.UpdateOpts{Name: &name}).Extract(); err != nil {
		t.Fatal(err)
	}
	if got := sim.LoadBalancers()[0]; got.ProvisioningStatus != "PENDING_UPDATE" || got.Name != "slow" {
		t.Errorf("after an update with an hour's provisioning time: %s %q", got.ProvisioningStatus, got.Name)
	}
}
