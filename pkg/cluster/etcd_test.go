package cluster

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/etcd"
)

func TestDefragmentOrder(t *testing.T) {
	healthy := func(name string, leader bool) etcd.Member {
		return etcd.Member{Name: name, ClientURL: "https://" + name + ":2379", Healthy: true, Leader: leader}
	}
	for _, tc := range []struct {
		name    string
		members []etcd.Member
		want    string // names in order, or the error's telling part
	}{
		{"leader last", []etcd.Member{healthy("cp-1", true), healthy("cp-2", false), healthy("cp-3", false)}, "cp-2 cp-3 cp-1"},
		{"leader in the middle", []etcd.Member{healthy("cp-1", false), healthy("cp-2", true), healthy("cp-3", false)}, "cp-1 cp-3 cp-2"},
		{"one member", []etcd.Member{healthy("cp-1", true)}, "cp-1"},
		{"a member down", []etcd.Member{healthy("cp-1", true), {Name: "cp-2", ClientURL: "https://cp-2:2379"}, healthy("cp-3", false)},
			"etcd member cp-2 does not answer"},
		{"a member never started", []etcd.Member{healthy("cp-1", true), {ID: 0xabc}}, "etcd member abc (not started) does not answer"},
		{"no leader", []etcd.Member{healthy("cp-1", false), healthy("cp-2", false)}, "no etcd member says it is the leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order, err := defragmentOrder(tc.members)
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q; want it to say %q", err, tc.want)
				}
				return
			}
			var names []string
			for _, m := range order {
				names = append(names, m.Name)
			}
			if got := strings.Join(names, " "); got != tc.want {
				t.Errorf("order %q; want %q", got, tc.want)
			}
		})
	}
}
