package plan

import (
	"slices"
	"strings"
	"testing"
)

func hostsHA() []DesiredHost {
	return []DesiredHost{
		{Name: "cp-1", Address: "10.0.0.1", Role: ControlPlane, Leader: true},
		{Name: "cp-2", Address: "10.0.0.2", Role: ControlPlane, UpgradeIndex: 2},
		{Name: "cp-3", Address: "10.0.0.3", Role: ControlPlane, UpgradeIndex: 1},
		{Name: "w-1", Address: "10.0.0.4", Role: Worker},
	}
}

func bare(d []DesiredHost) []HostState {
	var out []HostState
	for _, h := range d {
		out = append(out, HostState{Name: h.Name, Address: h.Address, Role: h.Role})
	}
	return out
}

// converged is the state after a successful apply at version v.
func converged(d []DesiredHost, v string, addons map[string]string) Observed {
	o := Observed{Cluster: ClusterState{Exists: true, Version: "v" + v, Nodes: map[string]*NodeState{}, Addons: addons}}
	for i, h := range d {
		o.Hosts = append(o.Hosts, HostState{Name: h.Name, Address: h.Address, Role: h.Role, ContainerdActive: true, ContainerdVersion: "2.2.9", KubeletActive: true,
			KubeletVersion: "v" + v, KubeadmVersion: "v" + v, Joined: true, AdminConf: h.Role == ControlPlane})
		o.Cluster.Nodes[h.Name] = &NodeState{Name: h.Name, KubeletVersion: "v" + v, Ready: true, ControlPlane: h.Role == ControlPlane}
		if h.Role == ControlPlane {
			o.Cluster.Etcd = append(o.Cluster.Etcd, EtcdMember{ID: uint64(i + 1), Name: h.Name, PeerURL: "https://" + h.Address + ":2380", Healthy: true})
		}
	}
	return o
}

func names(p *Plan) string {
	var s []string
	for _, st := range p.Steps {
		s = append(s, st.String())
	}
	return strings.Join(s, "; ")
}

func TestBuild(t *testing.T) {
	addons := map[string]string{"cni": "c1", "machine-controller": "m1"}
	tests := []struct {
		name    string
		desired Desired
		obs     Observed
		want    string
		wantErr string
		warn    string
	}{
		{
			name:    "fresh HA cluster",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons},
			obs:     Observed{Hosts: bare(hostsHA())},
			want: "prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; prerequisites on w-1; " +
				"install-kubernetes on cp-1; install-kubernetes on cp-2; install-kubernetes on cp-3; install-kubernetes on w-1; " +
				"kubeadm-init on cp-1; cni; join-control-plane on cp-2; join-control-plane on cp-3; join-worker on w-1; " +
				"approve-csrs; wait-nodes-ready; machine-controller",
		},
		{
			name:    "converged cluster: nothing to do",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons},
			obs:     converged(hostsHA(), "1.36.3", addons),
			want:    "",
		},
		{
			name:    "changed CNI manifests are reapplied",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"cni": "c2"}},
			obs:     converged(hostsHA(), "1.36.3", addons),
			want:    "cni",
		},
		{
			name:    "interrupted init is finished, not redone",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()[:1]},
			obs: Observed{Hosts: []HostState{{Name: "cp-1", Role: ControlPlane, ContainerdActive: true, ContainerdVersion: "2.2.9", Joined: true, AdminConf: true,
				KubeadmVersion: "v1.36.3", KubeletVersion: "v1.36.3"}}},
			want: "kubeadm-init-finish on cp-1; approve-csrs; wait-nodes-ready",
		},
		{
			name:    "reinstalled control plane is repaired",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons},
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", addons)
				o.Hosts[1] = HostState{Name: "cp-2", Address: "10.0.0.2", Role: ControlPlane}
				o.Cluster.Etcd[1].Healthy = false
				o.Cluster.Nodes["cp-2"].Ready = false
				return o
			}(),
			want: "prerequisites on cp-2; install-kubernetes on cp-2; remove-stale-member on cp-2; join-control-plane on cp-2; approve-csrs; wait-nodes-ready",
		},
		{
			name:    "repair refused without etcd quorum",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()},
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", nil)
				o.Hosts[1] = HostState{Name: "cp-2", Address: "10.0.0.2", Role: ControlPlane}
				o.Cluster.Etcd[1].Healthy = false
				o.Cluster.Etcd[2].Healthy = false
				return o
			}(),
			wantErr: "etcd has 1 healthy of 3 members, not a majority",
		},
		{
			name:    "minor upgrade in upgradeIndex order, workers last",
			desired: Desired{Version: "1.37.0", Hosts: hostsHA()},
			obs:     converged(hostsHA(), "1.36.3", nil),
			want:    "upgrade-preflight; upgrade-control-plane-leader on cp-1; upgrade-node on cp-3; upgrade-node on cp-2; upgrade-node on w-1; wait-nodes-ready",
		},
		{
			name: "preflight comes before the new version's prerequisites",
			desired: func() Desired {
				hs := hostsHA()
				for i := range hs {
					hs[i].PrereqHash = "new"
				}
				return Desired{Version: "1.37.0", Hosts: hs}
			}(),
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", nil)
				for i := range o.Hosts {
					o.Hosts[i].PrereqHash = "old"
				}
				return o
			}(),
			want: "upgrade-preflight; prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; prerequisites on w-1; upgrade-control-plane-leader on cp-1; upgrade-node on cp-3; upgrade-node on cp-2; upgrade-node on w-1; wait-nodes-ready",
		},
		{
			name: "v1.35 on containerd 1.x to v1.36: containerd moves first, one node at a time, then the upgrade",
			desired: func() Desired {
				hs := hostsHA()
				for i := range hs {
					hs[i].PrereqHash = "new"
				}
				return Desired{Version: "1.36.3", Hosts: hs}
			}(),
			obs: func() Observed {
				o := converged(hostsHA(), "1.35.4", nil)
				for i := range o.Hosts {
					o.Hosts[i].PrereqHash = "old"
					o.Hosts[i].ContainerdVersion = "1.6.20~ds1"
				}
				o.Hosts[3].ContainerdVersion = "2.1.4" // moved by an earlier, interrupted run
				return o
			}(),
			want: "upgrade-preflight; prerequisites on w-1; containerd on cp-1; containerd on cp-3; containerd on cp-2; upgrade-control-plane-leader on cp-1; upgrade-node on cp-3; upgrade-node on cp-2; upgrade-node on w-1; wait-nodes-ready",
		},
		{
			name:    "v1.35 keeps containerd 1.x",
			desired: Desired{Version: "1.35.4", Hosts: hostsHA()},
			obs: func() Observed {
				o := converged(hostsHA(), "1.35.4", nil)
				for i := range o.Hosts {
					o.Hosts[i].ContainerdVersion = "1.6.20~ds1"
				}
				return o
			}(),
			want: "",
		},
		{
			name:    "a joined node whose containerd cannot be read is moved",
			desired: Desired{Version: "1.37.0", Hosts: hostsHA()[:1]},
			obs: func() Observed {
				o := converged(hostsHA()[:1], "1.37.0", nil)
				o.Hosts[0].ContainerdVersion = "unknown"
				return o
			}(),
			want: "containerd on cp-1",
		},
		{
			name:    "interrupted upgrade resumes with the nodes left behind",
			desired: Desired{Version: "1.37.0", Hosts: hostsHA()},
			obs: func() Observed {
				o := converged(hostsHA(), "1.37.0", nil)
				o.Cluster.Nodes["w-1"].KubeletVersion = "v1.36.3"
				o.Hosts[3].KubeletVersion, o.Hosts[3].KubeadmVersion = "v1.36.3", "v1.36.3"
				return o
			}(),
			want: "upgrade-node on w-1",
		},
		{
			name:    "two minors at once is refused",
			desired: Desired{Version: "1.37.0", Hosts: hostsHA()},
			obs:     converged(hostsHA(), "1.35.5", nil),
			wantErr: "upgrade one minor version at a time (next: v1.36)",
		},
		{
			name:    "downgrade is refused",
			desired: Desired{Version: "1.35.5", Hosts: hostsHA()},
			obs:     converged(hostsHA(), "1.36.3", nil),
			wantErr: "downgrades are not supported",
		},
		{
			name:    "new worker joins an existing cluster",
			desired: Desired{Version: "1.36.3", Hosts: append(hostsHA(), DesiredHost{Name: "w-2", Role: Worker})},
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", nil)
				o.Hosts = append(o.Hosts, HostState{Name: "w-2", Role: Worker, ContainerdActive: true})
				return o
			}(),
			want: "install-kubernetes on w-2; join-worker on w-2; approve-csrs; wait-nodes-ready",
		},
		{
			name:    "joined host without a Node is reported",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()},
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", nil)
				delete(o.Cluster.Nodes, "cp-3")
				return o
			}(),
			want: "",
			warn: "cp-3 has joined before but its Node is missing",
		},
		{
			name:    "pending CSRs and metadata drift",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()},
			obs: func() Observed {
				o := converged(hostsHA(), "1.36.3", nil)
				o.Cluster.PendingCSRs, o.Cluster.MetadataDrift = true, []string{"w-1"}
				return o
			}(),
			want: "approve-csrs; node-metadata on w-1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := expectPlan(t, tt.desired, tt.obs, tt.want, tt.wantErr)
			if p != nil && tt.warn != "" && (len(p.Warnings) == 0 || !strings.Contains(p.Warnings[0], tt.warn)) {
				t.Errorf("warnings %v, want %q", p.Warnings, tt.warn)
			}
		})
	}
}

// expectPlan builds the plan of d and o and checks its steps against want (names joined by
// "; "), or the error against wantErr; it returns the plan, nil after an error.
func expectPlan(t *testing.T, d Desired, o Observed, want, wantErr string) *Plan {
	t.Helper()
	p, err := Build(d, o)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("got %v, want error %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		if !slices.Contains(Names, s.Name) {
			t.Errorf("step %q is missing from Names, so no test checks that a phase runs it", s.Name)
		}
	}
	if got := names(p); got != want {
		t.Errorf("steps:\n got: %s\nwant: %s", got, want)
	}
	return p
}

func TestNotReadyNodeIsWaitedFor(t *testing.T) {
	o := converged(hostsHA(), "1.36.3", nil)
	o.Cluster.Nodes["w-1"].Ready = false
	p, err := Build(Desired{Version: "1.36.3", Hosts: hostsHA()}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p); got != "wait-nodes-ready" {
		t.Errorf("got %q, want the plan to wait for the NotReady node", got)
	}
}

func TestKubeletUpgradeOfMachineDeployments(t *testing.T) {
	o := converged(hostsHA(), "1.36.3", map[string]string{"machine-deployments": "old"})
	p, err := Build(Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"machine-deployments": "new"},
		KubeletUpgrades: []string{"pool-a 1.35.4 → 1.36.3"}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || p.Steps[0].Name != StepMachineDeployment {
		t.Fatalf("got %q, want only the machine-deployments step", names(p))
	}
	if want := "kubelet upgrade: pool-a 1.35.4 → 1.36.3"; p.Steps[0].Reason != want {
		t.Errorf("reason %q, want %q", p.Steps[0].Reason, want)
	}
}

// adoptedCluster is a cluster another tool (KubeOne, kubeadm by hand) installed at version v:
// every host joined and running, no prerequisites record on any of them, canal's pods running
// and no record of anything slipway applied.
func adoptedCluster(v string) (Desired, Observed) {
	d := Desired{Version: v, Hosts: hostsHA(), Addons: map[string]string{"cni": "c1"}, CNI: "canal"}
	for i := range d.Hosts {
		d.Hosts[i].PrereqHash = "salt:rendered"
	}
	o := converged(hostsHA(), v, nil)
	o.Cluster.CNIs = []string{"canal"}
	return d, o
}

func TestAdoption(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Desired, *Observed)
		want    string
		wantErr string
	}{
		{
			name: "a cluster another tool installed is adopted: records only, nothing installed or restarted",
			want: "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; adopt-host on w-1; adopt-cni",
		},
		{
			name:   "once adopted, the next apply plans nothing",
			change: func(d *Desired, o *Observed) { adopted(d, o) },
			want:   "",
		},
		{
			name: "then an upgrade is planned as on a slipway-made cluster",
			change: func(d *Desired, o *Observed) {
				adopted(d, o)
				d.Version = "1.37.2"
			},
			want: "upgrade-preflight; upgrade-control-plane-leader on cp-1; upgrade-node on cp-3; upgrade-node on cp-2; upgrade-node on w-1; wait-nodes-ready",
		},
		{
			name: "an upgrade that turns on signed kubelet serving certificates approves the upgraded kubelets' requests",
			change: func(d *Desired, o *Observed) {
				adopted(d, o)
				d.Version = "1.37.2"
				o.Cluster.KubeletServingUnsigned = true
			},
			want: "upgrade-preflight; upgrade-control-plane-leader on cp-1; upgrade-node on cp-3; upgrade-node on cp-2; upgrade-node on w-1; approve-csrs; wait-nodes-ready",
		},
		{
			name:   "without an upgrade, unsigned kubelet serving certificates are left alone",
			change: func(d *Desired, o *Observed) { adopted(d, o); o.Cluster.KubeletServingUnsigned = true },
			want:   "",
		},
		{
			name:   "a host whose containerd is stopped runs the prerequisites",
			change: func(_ *Desired, o *Observed) { o.Hosts[3].ContainerdActive = false },
			want:   "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; prerequisites on w-1; adopt-cni",
		},
		{
			name:   "a host with swap on runs the prerequisites",
			change: func(_ *Desired, o *Observed) { o.Hosts[3].SwapActive = true },
			want:   "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; prerequisites on w-1; adopt-cni",
		},
		{
			name:   "a host slipway prepared with other settings runs them again, it is not adopted",
			change: func(_ *Desired, o *Observed) { o.Hosts[3].PrereqHash = "salt:older" },
			want:   "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; prerequisites on w-1; adopt-cni",
		},
		{
			name: "a host that has not joined is prepared and joined",
			change: func(_ *Desired, o *Observed) {
				o.Hosts[3] = HostState{Name: "w-1", Address: "10.0.0.4", Role: Worker}
				delete(o.Cluster.Nodes, "w-1")
			},
			want: "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; prerequisites on w-1; install-kubernetes on w-1; " +
				"adopt-cni; join-worker on w-1; approve-csrs; wait-nodes-ready",
		},
		{
			name: "a joined host whose containerd is too old for the version is moved, not adopted",
			change: func(_ *Desired, o *Observed) {
				o.Hosts[3].ContainerdVersion = "1.6.20"
			},
			want: "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; adopt-cni; containerd on w-1",
		},
		{
			name:   "a cluster with no CNI pods gets the manifest's CNI",
			change: func(_ *Desired, o *Observed) { o.Cluster.CNIs = nil },
			want:   "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; adopt-host on w-1; cni",
		},
		{
			name:    "a cluster running another CNI is refused before anything changes",
			change:  func(d *Desired, _ *Observed) { d.CNI = "cilium" },
			wantErr: "the cluster's pods run on canal, and the manifest asks for cilium",
		},
		{
			name:   "an external CNI is left alone",
			change: func(d *Desired, _ *Observed) { d.CNI, d.Addons = "", nil },
			want:   "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; adopt-host on w-1",
		},
		{
			name: "a CNI slipway applied whose manifests changed is applied again, not adopted",
			change: func(_ *Desired, o *Observed) {
				o.Cluster.Addons = map[string]string{"cni": "c0"}
			},
			want: "adopt-host on cp-1; adopt-host on cp-2; adopt-host on cp-3; adopt-host on w-1; cni",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, o := adoptedCluster("1.36.3")
			if tt.change != nil {
				tt.change(&d, &o)
			}
			p := expectPlan(t, d, o, tt.want, tt.wantErr)
			if p == nil {
				return
			}
			for _, s := range p.Steps {
				if (s.Name == StepAdoptHost || s.Name == StepAdoptCNI) && !strings.Contains(s.Reason, "another tool") {
					t.Errorf("%s: reason %q does not say why", s, s.Reason)
				}
			}
		})
	}
}

// adopted is the state after the adoption's apply: the records written.
func adopted(d *Desired, o *Observed) {
	for i := range o.Hosts {
		o.Hosts[i].PrereqHash = d.Hosts[i].PrereqHash
	}
	o.Cluster.Addons = map[string]string{"cni": d.Addons["cni"]}
}
