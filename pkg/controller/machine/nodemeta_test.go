package machine

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSyncTaints: the Machine's taints are on the Node (a value changed in place), one it gave
// before and no longer gives is removed, and taints of other writers stay, in their order.
func TestSyncTaints(t *testing.T) {
	notReady := corev1.Taint{Key: "cluster.k8s.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	others := corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}
	gpu := func(v string) corev1.Taint {
		return corev1.Taint{Key: "gpu", Value: v, Effect: corev1.TaintEffectNoSchedule}
	}
	spot := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name            string
		have, want, out []corev1.Taint
		gave            map[string]bool
	}{
		{"first sync adds", []corev1.Taint{notReady}, []corev1.Taint{gpu("a")}, []corev1.Taint{notReady, gpu("a")}, nil},
		{"a value changes in place", []corev1.Taint{gpu("a"), notReady}, []corev1.Taint{gpu("b")}, []corev1.Taint{gpu("b"), notReady}, map[string]bool{"gpu:NoSchedule": true}},
		{"one no longer given goes, others stay", []corev1.Taint{others, gpu("a"), spot}, []corev1.Taint{spot}, []corev1.Taint{others, spot},
			map[string]bool{"gpu:NoSchedule": true, "spot:PreferNoSchedule": true}},
		{"one not recorded as given stays", []corev1.Taint{gpu("a")}, nil, []corev1.Taint{gpu("a")}, nil},
		{"nothing on either side", nil, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := syncTaints(tt.have, tt.want, tt.gave); !reflect.DeepEqual(got, tt.out) {
				t.Errorf("got %v, want %v", got, tt.out)
			}
		})
	}
}

func TestSyncMap(t *testing.T) {
	have := map[string]string{"kubernetes.io/hostname": "n1", "env": "prod", "team": "a", "old": "x"}
	syncMap(have, map[string]string{"env": "staging", "team": "a"}, map[string]bool{"env": true, "team": true, "old": true})
	want := map[string]string{"kubernetes.io/hostname": "n1", "env": "staging", "team": "a"}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("got %v, want %v", have, want)
	}
}
