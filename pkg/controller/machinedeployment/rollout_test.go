package machinedeployment

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func TestResolveSurgeUnavailable(t *testing.T) {
	tests := []struct {
		name             string
		surge, unavail   intstr.IntOrString
		replicas         int32
		wantS, wantU     int32
		wantErrSubstring string
	}{
		{name: "defaults", surge: intstr.FromInt32(1), unavail: intstr.FromInt32(0), replicas: 3, wantS: 1, wantU: 0},
		{name: "percent surge rounds up", surge: intstr.FromString("25%"), unavail: intstr.FromInt32(0), replicas: 3, wantS: 1, wantU: 0},
		{name: "percent unavailable rounds down", surge: intstr.FromInt32(0), unavail: intstr.FromString("25%"), replicas: 7, wantS: 0, wantU: 1},
		{name: "both round to 0 gives unavailable 1", surge: intstr.FromString("0%"), unavail: intstr.FromString("10%"), replicas: 3, wantS: 0, wantU: 1},
		{name: "both 0 rejected", surge: intstr.FromInt32(0), unavail: intstr.FromInt32(0), replicas: 3, wantErrSubstring: "cannot both be 0"},
		{name: "garbage", surge: intstr.FromString("x"), unavail: intstr.FromInt32(0), replicas: 3, wantErrSubstring: "maxSurge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, u, err := ResolveSurgeUnavailable(tt.surge, tt.unavail, tt.replicas)
			if tt.wantErrSubstring != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstring) {
					t.Fatalf("err = %v, want %q", err, tt.wantErrSubstring)
				}
				return
			}
			if err != nil || s != tt.wantS || u != tt.wantU {
				t.Fatalf("= %d, %d, %v; want %d, %d", s, u, err, tt.wantS, tt.wantU)
			}
		})
	}
}

func set(rev int64, spec, count, avail int32, annotations map[string]string) *setState {
	ms := &v1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	return &setState{ms: ms, revision: rev, spec: spec, origSpec: spec, count: count, available: avail}
}

func TestRolloutSteps(t *testing.T) {
	tests := []struct {
		name    string
		plan    *rollout
		step    func(p *rollout)
		wantNew int32
		wantOld []int32
	}{
		{
			name: "surge: new set grows by maxSurge",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 0, 0, 0, nil), oldSets: []*setState{set(1, 3, 3, 3, nil)}},
			step: (*rollout).scaleNew, wantNew: 1, wantOld: []int32{3},
		},
		{
			name: "surge: a machine still being deleted blocks growth",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 1, 1, 1, nil), oldSets: []*setState{set(1, 2, 3, 2, nil)}},
			step: (*rollout).scaleNew, wantNew: 1, wantOld: []int32{2},
		},
		{
			name: "surge: old set waits for the new machine to be available",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 1, 1, 0, nil), oldSets: []*setState{set(1, 3, 3, 3, nil)}},
			step: (*rollout).scaleDownOld, wantNew: 1, wantOld: []int32{3},
		},
		{
			name: "surge: old set shrinks once the new machine is available",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 1, 1, 1, nil), oldSets: []*setState{set(1, 3, 3, 3, nil)}},
			step: (*rollout).scaleDownOld, wantNew: 1, wantOld: []int32{2},
		},
		{
			name: "unavailable: old set shrinks first",
			plan: &rollout{replicas: 3, maxUnavailable: 1, newSet: set(2, 0, 0, 0, nil), oldSets: []*setState{set(1, 3, 3, 3, nil)}},
			step: (*rollout).scaleDownOld, wantNew: 0, wantOld: []int32{2},
		},
		{
			name: "unavailable machines of old sets go without counting against availability",
			plan: &rollout{replicas: 3, maxUnavailable: 0, maxSurge: 1, newSet: set(3, 1, 1, 1, nil),
				oldSets: []*setState{set(1, 1, 1, 0, nil), set(2, 2, 2, 2, nil)}},
			step: (*rollout).scaleDownOld, wantNew: 1, wantOld: []int32{0, 2},
		},
		{
			name: "stale cache: availability never counts beyond spec",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 1, 1, 1, nil), oldSets: []*setState{set(1, 2, 3, 3, nil)}},
			step: (*rollout).scaleDownOld, wantNew: 1, wantOld: []int32{2},
		},
		{
			name: "proportional scale-up in mid-rollout",
			plan: &rollout{replicas: 20, maxSurge: 2, newSet: set(2, 4, 4, 4, map[string]string{v1alpha1.MaxReplicasAnnotation: "11"}),
				oldSets: []*setState{set(1, 7, 7, 7, map[string]string{v1alpha1.MaxReplicasAnnotation: "11"})}},
			step: (*rollout).scale, wantNew: 8, wantOld: []int32{14},
		},
		{
			name: "scale with one active set",
			plan: &rollout{replicas: 5, maxSurge: 1, newSet: set(2, 2, 2, 2, nil), oldSets: []*setState{set(1, 0, 0, 0, nil)}},
			step: (*rollout).scale, wantNew: 5, wantOld: []int32{0},
		},
		{
			name: "saturated new set retires old sets",
			plan: &rollout{replicas: 3, maxSurge: 1, newSet: set(2, 3, 3, 3, nil), oldSets: []*setState{set(1, 1, 1, 1, nil)}},
			step: (*rollout).scale, wantNew: 3, wantOld: []int32{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.step(tt.plan)
			if tt.plan.newSet.spec != tt.wantNew {
				t.Errorf("new set spec = %d, want %d", tt.plan.newSet.spec, tt.wantNew)
			}
			for i, s := range tt.plan.oldSets {
				if s.spec != tt.wantOld[i] {
					t.Errorf("old set %d spec = %d, want %d", i, s.spec, tt.wantOld[i])
				}
			}
		})
	}
}
