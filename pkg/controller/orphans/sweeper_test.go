package orphans

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/cloudtrack"
)

// leftoverCloud holds, per Machine UID, allocations that only Delete releases, one per call,
// and lists no server at all: a stuck server that vanished by itself and left its port and
// floating IP behind.
type leftoverCloud struct {
	cloud.Provider
	mu      sync.Mutex
	held    map[types.UID]int
	fail    map[types.UID]bool
	deletes map[types.UID]int
	updates int
}

func (c *leftoverCloud) Delete(ctx context.Context, m *v1alpha1.Machine, update cloud.MachineUpdater) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deletes[m.UID]++
	if c.fail[m.UID] {
		return false, errors.New("503 Service Unavailable")
	}
	if c.held[m.UID] > 0 {
		c.held[m.UID]--
		c.updates++
		if err := update(ctx, func(m *v1alpha1.Machine) { m.Annotations = map[string]string{"held": "less"} }); err != nil {
			return false, err
		}
	}
	return c.held[m.UID] == 0, nil
}

func (c *leftoverCloud) List(context.Context, *v1alpha1.Machine) ([]cloud.Instance, error) {
	return nil, nil
}

func leftoverMachine(name string) *v1alpha1.Machine {
	return &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
}

// TestReleaseLeftovers: every recorded leftover gets Delete calls, although the cloud lists no
// server for it, until Delete reports everything gone; only then is its record forgotten.
func TestReleaseLeftovers(t *testing.T) {
	tests := []struct {
		name        string
		held        map[types.UID]int
		fail        map[types.UID]bool
		sweeps      int
		wantDeletes map[types.UID]int
		wantForgot  []string
		wantErr     bool
	}{
		{name: "server gone, port and floating IP left", held: map[types.UID]int{"uid-a": 2}, sweeps: 3,
			wantDeletes: map[types.UID]int{"uid-a": 2}, wantForgot: []string{"uid-a"}},
		{name: "nothing left to release", held: map[types.UID]int{}, sweeps: 1,
			wantDeletes: map[types.UID]int{"uid-a": 1}, wantForgot: []string{"uid-a"}},
		{name: "still allocated", held: map[types.UID]int{"uid-a": 5}, sweeps: 2,
			wantDeletes: map[types.UID]int{"uid-a": 2}},
		{name: "a failing Delete keeps the record and does not stop the others",
			held: map[types.UID]int{"uid-b": 1}, fail: map[types.UID]bool{"uid-a": true}, sweeps: 2,
			wantDeletes: map[types.UID]int{"uid-a": 2, "uid-b": 1}, wantForgot: []string{"uid-b"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &leftoverCloud{held: maps.Clone(tt.held), fail: tt.fail, deletes: map[types.UID]int{}}
			s := &Sweeper{cloud: cloudtrack.New(c), log: logr.Discard()}
			left := map[string]*v1alpha1.Machine{"uid-a": leftoverMachine("a")}
			if _, ok := tt.wantDeletes["uid-b"]; ok {
				left["uid-b"] = leftoverMachine("b")
			}
			var forgot []string
			rerecorded := 0
			update := func(m *v1alpha1.Machine) cloud.MachineUpdater {
				return func(_ context.Context, mutate func(*v1alpha1.Machine)) error {
					mutate(m)
					rerecorded++
					return nil
				}
			}
			var err error
			for range tt.sweeps {
				err = s.releaseLeftovers(context.Background(), left, update, func(_ context.Context, uid string) error {
					forgot = append(forgot, uid)
					delete(left, uid)
					return nil
				})
			}
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error %t", err, tt.wantErr)
			}
			if !maps.Equal(c.deletes, tt.wantDeletes) {
				t.Errorf("Delete calls = %v, want %v", c.deletes, tt.wantDeletes)
			}
			slices.Sort(forgot)
			if !slices.Equal(forgot, tt.wantForgot) {
				t.Errorf("forgotten records = %v, want %v", forgot, tt.wantForgot)
			}
			if rerecorded != c.updates {
				t.Errorf("%d provider updates reached the record, want %d", rerecorded, c.updates)
			}
		})
	}
}

func TestOrphans(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	insts := []cloud.Instance{{ID: "1", MachineUID: "live"}, {ID: "2", MachineUID: "gone"}, {ID: "3", MachineUID: "creating"}, {ID: "4"}}
	live := map[string]bool{"live": true}
	creating := func(uid string) bool { return uid == "creating" }
	first := map[string]time.Time{}
	seen := map[string]bool{}
	if got := orphans(insts, live, creating, first, seen, t0, time.Minute); len(got) != 0 {
		t.Fatalf("orphans at first sight = %v, want none before the grace period", got)
	}
	got := orphans(insts, live, creating, first, map[string]bool{}, t0.Add(time.Minute), time.Minute)
	if len(got) != 1 || got[0].ID != "2" {
		t.Fatalf("orphans after the grace period = %v, want only server 2", got)
	}
	if !seen["gone"] || seen["live"] || seen["creating"] {
		t.Fatalf("seen = %v", seen)
	}
}
