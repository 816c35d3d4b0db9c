package plan

import (
	"strings"
	"testing"
)

func TestWaitPools(t *testing.T) {
	applied := map[string]string{"cni": "c1", "machine-controller": "m1", "machine-deployments": "d1"}
	ready := map[string]PoolState{"pool-a": {Replicas: 2, Ready: 2, Settled: true}, "pool-b": {Replicas: 0, Settled: true}}
	with := func(pools map[string]PoolState, addons map[string]string) Observed {
		o := converged(hostsHA(), "1.36.3", addons)
		o.Cluster.Pools = pools
		return o
	}
	tests := []struct {
		name       string
		desired    Desired
		obs        Observed
		want       string
		wantReason string
	}{
		{
			name:    "fresh cluster: the wait is the last step, after the MachineDeployments",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a"}},
			obs:     Observed{Hosts: bare(hostsHA())},
			want: "prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; prerequisites on w-1; " +
				"install-kubernetes on cp-1; install-kubernetes on cp-2; install-kubernetes on cp-3; install-kubernetes on w-1; " +
				"kubeadm-init on cp-1; cni; join-control-plane on cp-2; join-control-plane on cp-3; join-worker on w-1; " +
				"approve-csrs; wait-nodes-ready; machine-controller; machine-deployments; wait-pools",
			wantReason: "machine-controller changes the worker pools",
		},
		{
			name:    "changed pools are applied, then waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"cni": "c1", "machine-controller": "m1", "machine-deployments": "d2"}, Pools: []string{"pool-a", "pool-b"}},
			obs:     with(ready, applied),
			want:    "machine-deployments; wait-pools", wantReason: "machine-deployments changes the worker pools",
		},
		{
			name:    "re-apply with Ready pools: nothing to do, no wait",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a", "pool-b"}},
			obs:     with(ready, applied),
		},
		{
			name:    "a pool short of Ready is waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a", "pool-b"}},
			obs:     with(map[string]PoolState{"pool-a": {Replicas: 2, Ready: 1}, "pool-b": {Settled: true}}, applied),
			want:    "wait-pools", wantReason: "worker pools not Ready: pool-a (1 of 2 Ready)",
		},
		{
			name:    "a rollout still in progress is waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a"}},
			obs:     with(map[string]PoolState{"pool-a": {Replicas: 2, Ready: 2}}, applied),
			want:    "wait-pools", wantReason: "pool-a (2 of 2 Ready)",
		},
		{
			name:    "a pool deleted by hand is applied again, then waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a", "pool-c"}},
			obs:     with(ready, applied),
			want:    "machine-deployments; wait-pools", wantReason: "machine-deployments changes the worker pools",
		},
		{
			name:    "--wait-pools=false: applied, not waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"cni": "c1", "machine-controller": "m1", "machine-deployments": "d2"}, Pools: []string{"pool-a"}, NoPoolWait: true},
			obs:     with(map[string]PoolState{"pool-a": {Replicas: 2}}, applied),
			want:    "machine-deployments",
		},
		{
			name:    "--wait-pools=false: a pool deleted by hand is applied again",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a", "pool-c"}, NoPoolWait: true},
			obs:     with(ready, applied),
			want:    "machine-deployments", wantReason: "no MachineDeployment for pool-c",
		},
		{
			name:    "--wait-pools=false: a pool short of Ready is left alone",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a"}, NoPoolWait: true},
			obs:     with(map[string]PoolState{"pool-a": {Replicas: 2, Ready: 1}}, applied),
		},
		{
			name:    "pools outside the manifest are not waited for",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: applied, Pools: []string{"pool-a"}},
			obs:     with(map[string]PoolState{"pool-a": {Replicas: 2, Ready: 2, Settled: true}, "hand-made": {Replicas: 3}}, applied),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(tt.desired, tt.obs)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tt.want {
				t.Fatalf("steps:\n got: %s\nwant: %s", got, tt.want)
			}
			if tt.wantReason != "" && !strings.Contains(p.Steps[len(p.Steps)-1].Reason, tt.wantReason) {
				t.Errorf("reason %q, want it to contain %q", p.Steps[len(p.Steps)-1].Reason, tt.wantReason)
			}
		})
	}
}
