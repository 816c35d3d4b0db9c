package plan

import (
	"strings"
	"testing"
)

// lostControlPlanes is a cluster whose control-plane hosts were all replaced by bare ones while
// its worker kept running: no API answers, the worker still holds its kubelet.conf.
func lostControlPlanes(d []DesiredHost, v string) Observed {
	o := Observed{}
	for _, h := range d {
		s := HostState{Name: h.Name, Address: h.Address, Role: h.Role}
		if h.Role == Worker {
			s = HostState{Name: h.Name, Address: h.Address, Role: h.Role, ContainerdActive: true, ContainerdVersion: "2.2.9", KubeletActive: true,
				KubeletVersion: "v" + v, KubeadmVersion: "v" + v, Joined: true}
		}
		o.Hosts = append(o.Hosts, s)
	}
	return o
}

func TestRestorePlan(t *testing.T) {
	addons := map[string]string{"cni": "c1"}
	single := []DesiredHost{hostsHA()[0], hostsHA()[3]}
	withData := lostControlPlanes(hostsHA(), "1.36.3")
	withData.Hosts[1].EtcdData = true
	withData.Hosts[2].AdminConf, withData.Hosts[2].Joined = true, true
	tests := []struct {
		name    string
		desired Desired
		obs     Observed
		want    string
		wantErr []string
	}{
		{
			name:    "every control plane lost: etcd restored on the leader before init, the others' Nodes forgotten before they join",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons, Restore: true},
			obs:     lostControlPlanes(hostsHA(), "1.36.3"),
			want: "prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; " +
				"install-kubernetes on cp-1; install-kubernetes on cp-2; install-kubernetes on cp-3; " +
				"restore-etcd on cp-1; kubeadm-init on cp-1; restore-finish; cni; join-control-plane on cp-2; join-control-plane on cp-3; " +
				"approve-csrs; wait-nodes-ready",
		},
		{
			name:    "one control plane: its old serving certificate requests are forgotten, no Node",
			desired: Desired{Version: "1.36.3", Hosts: single, Addons: addons, Restore: true},
			obs:     lostControlPlanes(single, "1.36.3"),
			want:    "prerequisites on cp-1; install-kubernetes on cp-1; restore-etcd on cp-1; kubeadm-init on cp-1; restore-finish; cni; approve-csrs; wait-nodes-ready",
		},
		{
			name:    "a cluster that answers is repaired, not restored",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons, Restore: true},
			obs:     converged(hostsHA(), "1.36.3", addons),
			wantErr: []string{"this one answers"},
		},
		{
			name:    "control planes that hold a cluster's state are named, with what they hold",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons, Restore: true},
			obs:     withData,
			wantErr: []string{"cp-2 (etcd data in /var/lib/etcd)", "cp-3 (a kubelet.conf, an admin.conf)", "slipway reset"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(tc.desired, tc.obs)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; plan %s", names(p))
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "cp-1") {
					t.Errorf("error %q names cp-1, which is fresh", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tc.want {
				t.Errorf("plan:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestRestoreEncryptedPlan: a cluster that encrypted Secrets is restored with the same steps,
// restore-etcd putting its encryption configuration back too; kubeadm init keeps it, so none
// of the steps that enable encryption on a running cluster follow.
func TestRestoreEncryptedPlan(t *testing.T) {
	addons := map[string]string{"cni": "c1"}
	p, err := Build(Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons, Restore: true, Encryption: true}, lostControlPlanes(hostsHA(), "1.36.3"))
	if err != nil {
		t.Fatal(err)
	}
	want := "prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; " +
		"install-kubernetes on cp-1; install-kubernetes on cp-2; install-kubernetes on cp-3; " +
		"restore-etcd on cp-1; kubeadm-init on cp-1; restore-finish; cni; join-control-plane on cp-2; join-control-plane on cp-3; " +
		"approve-csrs; wait-nodes-ready"
	if got := names(p); got != want {
		t.Errorf("plan:\n got %s\nwant %s", got, want)
	}
	if r := p.Steps[6].Reason; p.Steps[6].Name != StepRestoreEtcd || r != "--restore-from: the CAs, keys and encryption configuration from the PKI backup, etcd's data from the snapshot" {
		t.Errorf("restore-etcd's reason: %q", r)
	}
}
