package plan

import (
	"maps"
	"testing"
)

func TestBuildImageArchive(t *testing.T) {
	addons := map[string]string{"cni": "c1", "machine-controller": "m1"}
	imported := func(hash string, hosts ...string) map[string]string {
		a := maps.Clone(addons)
		for _, h := range hosts {
			a[ImageArchiveRecord(h)] = hash
		}
		return a
	}
	withArchive := func(hash string) Desired {
		return Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons, ImageArchive: hash}
	}
	reinstalled := converged(hostsHA(), "1.36.3", imported("a1", "cp-1", "cp-2", "cp-3"))
	reinstalled.Hosts[2].Joined = false
	tests := []struct {
		name    string
		desired Desired
		obs     Observed
		want    string
	}{
		{name: "fresh cluster: every control plane imports before the machine-controller",
			desired: withArchive("a1"), obs: Observed{Hosts: bare(hostsHA())},
			want: "prerequisites on cp-1; prerequisites on cp-2; prerequisites on cp-3; prerequisites on w-1; " +
				"install-kubernetes on cp-1; install-kubernetes on cp-2; install-kubernetes on cp-3; install-kubernetes on w-1; " +
				"kubeadm-init on cp-1; cni; join-control-plane on cp-2; join-control-plane on cp-3; join-worker on w-1; " +
				"approve-csrs; wait-nodes-ready; import-images on cp-1; import-images on cp-2; import-images on cp-3; machine-controller"},
		{name: "imported everywhere: nothing to do", desired: withArchive("a1"),
			obs: converged(hostsHA(), "1.36.3", imported("a1", "cp-1", "cp-2", "cp-3"))},
		{name: "no archive: no import", desired: Desired{Version: "1.36.3", Hosts: hostsHA(), Addons: addons},
			obs: converged(hostsHA(), "1.36.3", addons)},
		{name: "a changed archive is imported again", desired: withArchive("a2"),
			obs:  converged(hostsHA(), "1.36.3", imported("a1", "cp-1", "cp-2", "cp-3")),
			want: "import-images on cp-1; import-images on cp-2; import-images on cp-3"},
		{name: "an interrupted import resumes where it was not recorded", desired: withArchive("a1"),
			obs:  converged(hostsHA(), "1.36.3", imported("a1", "cp-1")),
			want: "import-images on cp-2; import-images on cp-3"},
		{name: "a reinstalled control plane imports again", desired: withArchive("a1"), obs: reinstalled,
			want: "remove-stale-member on cp-3; join-control-plane on cp-3; approve-csrs; wait-nodes-ready; import-images on cp-3"},
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
				if s.Name == StepImportImages && (!s.Parallel || s.Reason == "") {
					t.Errorf("%s: parallel %v, reason %q", s, s.Parallel, s.Reason)
				}
			}
		})
	}
}
