package plan

import "testing"

func TestSnapshotsStage(t *testing.T) {
	withHash := func(hash string) []DesiredHost {
		hs := hostsHA()
		for i := range hs {
			if hs[i].Role == ControlPlane {
				hs[i].SnapshotsHash = hash
			}
		}
		return hs
	}
	recorded := func(hash string) Observed {
		o := converged(hostsHA(), "1.36.3", nil)
		for i := range o.Hosts {
			if o.Hosts[i].Role == ControlPlane {
				o.Hosts[i].SnapshotsHash = hash
			}
		}
		return o
	}
	all := "etcd-snapshots on cp-1; etcd-snapshots on cp-2; etcd-snapshots on cp-3"
	for _, tc := range []struct {
		name       string
		want, have string
		plan       string
	}{
		{"scheduled on every control plane", "h1", "", all},
		{"unchanged", "h1", "h1", ""},
		{"changed schedule or etcd image", "h2", "h1", all},
		{"no longer wanted", "", "h1", all},
		{"never wanted", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(Desired{Version: "1.36.3", Hosts: withHash(tc.want)}, recorded(tc.have))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(p); got != tc.plan {
				t.Errorf("plan %q, want %q", got, tc.plan)
			}
			for _, s := range p.Steps {
				if !s.Parallel {
					t.Errorf("%s is not parallel: the timers are independent", s)
				}
			}
		})
	}
}
