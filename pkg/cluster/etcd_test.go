package cluster

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/plan"
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

func TestMemberID(t *testing.T) {
	ms := []etcd.Member{{ID: 0x8e9e05c52164694d, Name: "cp-1"}, {ID: 0xabc, Name: "cp-2"}, {ID: 0xdef}}
	for _, tc := range []struct {
		name, member string
		want         uint64
		err          string
	}{
		{"by name", "cp-2", 0xabc, ""},
		{"by ID", "8e9e05c52164694d", 0x8e9e05c52164694d, ""},
		{"a member not started, by ID", "def", 0xdef, ""},
		{"unknown", "cp-9", 0, `no such etcd member "cp-9": the members are cp-1, cp-2, def (not started)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := memberID(ms, tc.member)
			if tc.err != "" {
				if !errors.Is(err, ErrNoSuchMember) || err.Error() != tc.err {
					t.Errorf("error %v; want %q, wrapping ErrNoSuchMember", err, tc.err)
				}
				return
			}
			if err != nil || id != tc.want {
				t.Errorf("id %x, %v; want %x", id, err, tc.want)
			}
		})
	}
}

func TestDisarmedNamesMembers(t *testing.T) {
	ms := []etcd.Member{{ID: 0xabc, Name: "cp-1"}}
	got := disarmed(ms, []etcd.Alarm{{MemberID: 0xabc, Type: "NOSPACE"}, {MemberID: 0x123, Type: "CORRUPT"}})
	want := []Disarmed{{Member: "cp-1", ID: "abc", Alarm: "NOSPACE"}, {ID: "123", Alarm: "CORRUPT"}}
	if !slices.Equal(got, want) {
		t.Errorf("disarmed %+v; want %+v", got, want)
	}
	// -o json prints [] for nothing disarmed, not null.
	if got := disarmed(ms, nil); got == nil || len(got) != 0 {
		t.Errorf("nothing disarmed: %#v; want an empty, non-nil slice", got)
	}
}

func TestWarnAlarms(t *testing.T) {
	var out strings.Builder
	warnAlarms([]plan.EtcdMember{{Name: "cp-1", Healthy: true}, {Name: "cp-2", Healthy: true, Alarms: []string{"NOSPACE"}}}, &out)
	if got := out.String(); !strings.Contains(got, "Warning: etcd member cp-2 has the NOSPACE alarm\n") || strings.Contains(got, "cp-1") || !strings.Contains(got, "slipway etcd disarm --help") {
		t.Errorf("warnings:\n%s", got)
	}
	out.Reset()
	warnAlarms([]plan.EtcdMember{{Name: "cp-1", Healthy: true}}, &out)
	if out.Len() != 0 {
		t.Errorf("a warning without an alarm:\n%s", out.String())
	}
}
