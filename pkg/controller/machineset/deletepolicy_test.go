package machineset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func machineAt(name string, created time.Time, mutate ...func(*v1alpha1.Machine)) *v1alpha1.Machine {
	m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(created)}}
	m.Status.Conditions = []metav1.Condition{{Type: v1alpha1.MachineNodeReady, Status: metav1.ConditionTrue}}
	for _, f := range mutate {
		f(m)
	}
	return m
}

func TestPickForDeletion(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := machineAt("old", t0)
	mid := machineAt("mid", t0.Add(time.Minute))
	young := machineAt("young", t0.Add(2*time.Minute))
	marked := machineAt("marked", t0.Add(3*time.Minute), func(m *v1alpha1.Machine) {
		m.Annotations = map[string]string{v1alpha1.DeleteMachineAnnotation: "yes"}
	})
	failed := machineAt("failed", t0.Add(4*time.Minute), func(m *v1alpha1.Machine) {
		r := v1alpha1.CreateMachineError
		m.Status.ErrorReason = &r
	})
	notReady := machineAt("notready", t0.Add(5*time.Minute), func(m *v1alpha1.Machine) { m.Status.Conditions = nil })
	all := []*v1alpha1.Machine{old, mid, young, marked, failed, notReady}
	tests := []struct {
		name   string
		policy v1alpha1.MachineSetDeletePolicy
		n      int
		want   []string
	}{
		{name: "annotated, failed and not ready go first", policy: v1alpha1.OldestMachineSetDeletePolicy, n: 3, want: []string{"marked", "failed", "notready"}},
		{name: "oldest", policy: v1alpha1.OldestMachineSetDeletePolicy, n: 5, want: []string{"marked", "failed", "notready", "old", "mid"}},
		{name: "newest", policy: v1alpha1.NewestMachineSetDeletePolicy, n: 5, want: []string{"marked", "failed", "notready", "young", "mid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pickForDeletion(all, tt.policy, tt.n)
			for i, m := range got {
				if m.Name != tt.want[i] {
					t.Fatalf("pick %d = %s, want %v", i, m.Name, tt.want)
				}
			}
		})
	}
	t.Run("random is stable", func(t *testing.T) {
		a := pickForDeletion([]*v1alpha1.Machine{old, mid, young}, v1alpha1.RandomMachineSetDeletePolicy, 1)
		b := pickForDeletion([]*v1alpha1.Machine{young, old, mid}, v1alpha1.RandomMachineSetDeletePolicy, 1)
		if a[0].Name != b[0].Name {
			t.Fatalf("random picks %s then %s from the same machines", a[0].Name, b[0].Name)
		}
	})
}
