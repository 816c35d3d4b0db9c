package machineset

import (
	"hash/fnv"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// Deletion priorities: higher goes first.
const (
	prioMustDelete = 100 // annotated cluster.k8s.io/delete-machine
	prioFailed     = 90  // terminal error or unhealthy
	prioNotReady   = 80  // no Ready Node yet: deleting it costs no capacity
	prioReady      = 0
)

// pickForDeletion returns the n Machines to delete: annotated ones first, then failed ones, then
// ones not ready, then by policy (Oldest, Newest, or Random, which is a stable pseudo-random
// order so that repeated reconciles agree on the choice).
func pickForDeletion(machines []*v1alpha1.Machine, policy v1alpha1.MachineSetDeletePolicy, n int) []*v1alpha1.Machine {
	type cand struct {
		m    *v1alpha1.Machine
		prio int
		rank uint32
	}
	cands := make([]cand, 0, len(machines))
	for _, m := range machines {
		c := cand{m: m, prio: prioReady}
		switch {
		case m.Annotations[v1alpha1.DeleteMachineAnnotation] != "":
			c.prio = prioMustDelete
		case machineFailed(m):
			c.prio = prioFailed
		case !machineutil.Ready(m):
			c.prio = prioNotReady
		}
		h := fnv.New32a()
		h.Write([]byte(m.UID))
		c.rank = h.Sum32()
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.prio != b.prio {
			return a.prio > b.prio
		}
		ta, tb := a.m.CreationTimestamp, b.m.CreationTimestamp
		switch policy {
		case v1alpha1.OldestMachineSetDeletePolicy:
			if !ta.Equal(&tb) {
				return ta.Before(&tb)
			}
		case v1alpha1.NewestMachineSetDeletePolicy:
			if !ta.Equal(&tb) {
				return tb.Before(&ta)
			}
		default:
			return a.rank < b.rank
		}
		return a.m.Name < b.m.Name
	})
	out := make([]*v1alpha1.Machine, 0, n)
	for i := 0; i < n && i < len(cands); i++ {
		out = append(out, cands[i].m)
	}
	return out
}

// machineFailed reports whether the Machine hit a terminal error or should be replaced.
func machineFailed(m *v1alpha1.Machine) bool {
	return m.Status.ErrorReason != nil || m.Status.Phase == v1alpha1.MachinePhaseFailed ||
		meta.IsStatusConditionFalse(m.Status.Conditions, v1alpha1.MachineHealthy)
}
