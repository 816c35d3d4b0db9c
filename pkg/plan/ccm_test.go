package plan

import "testing"

// TestCloudControllerManager: the OpenStack cloud-controller-manager is applied when its
// rendered hash is new or changed, after the image archive's import and before the
// machine-controller; a converged cluster applies nothing, and a cluster without it (no hash
// desired) never gets the step.
func TestCloudControllerManager(t *testing.T) {
	withCCM := map[string]string{"cni": "c1", "cloud-controller-manager": "o1", "machine-controller": "m1"}
	tests := []struct {
		name    string
		desired Desired
		obs     Observed
		want    string
	}{
		{
			name:    "fresh cluster: after the nodes are Ready, before the machine-controller",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()[:1], Addons: withCCM},
			obs:     Observed{Hosts: bare(hostsHA()[:1])},
			want: "prerequisites on cp-1; install-kubernetes on cp-1; kubeadm-init on cp-1; cni; approve-csrs; wait-nodes-ready; " +
				"cloud-controller-manager; machine-controller",
		},
		{
			name:    "with an image archive: imported first",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA()[:1], Addons: withCCM, ImageArchive: "a1"},
			obs:     Observed{Hosts: bare(hostsHA()[:1])},
			want: "prerequisites on cp-1; install-kubernetes on cp-1; kubeadm-init on cp-1; cni; approve-csrs; wait-nodes-ready; " +
				"import-images on cp-1; cloud-controller-manager; machine-controller",
		},
		{
			name:    "converged: nothing to do",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: withCCM},
			obs:     converged(hostsHA(), "1.36.3", withCCM),
		},
		{
			name:    "an existing cluster that turns it on",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: withCCM},
			obs:     converged(hostsHA(), "1.36.3", map[string]string{"cni": "c1", "machine-controller": "m1"}),
			want:    "cloud-controller-manager",
		},
		{
			name:    "changed credentials or image: applied again, the machine-controller left alone",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"cni": "c1", "cloud-controller-manager": "o2", "machine-controller": "m1"}},
			obs:     converged(hostsHA(), "1.36.3", withCCM),
			want:    "cloud-controller-manager",
		},
		{
			name:    "none: never",
			desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: map[string]string{"cni": "c1"}},
			obs:     converged(hostsHA(), "1.36.3", withCCM),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(tt.desired, tt.obs)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tt.want {
				t.Errorf("plan:\n got %s\nwant %s", got, tt.want)
			}
			for _, s := range p.Steps {
				if s.Name == StepCloudController && (s.Reason == "" || s.Host != "") {
					t.Errorf("step %+v: want a reason and no host", s)
				}
			}
		})
	}
}
