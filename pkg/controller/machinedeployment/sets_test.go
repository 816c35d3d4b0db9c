package machinedeployment

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func TestCurrentSet(t *testing.T) {
	template := func(flavor string, labels map[string]string) v1alpha1.MachineTemplateSpec {
		// Keys in another order than encoding/json writes them, as another controller may store them.
		raw := `{"cloudProviderSpec":{"image":"ubuntu","flavor":"` + flavor + `"},"cloudProvider":"openstack","operatingSystem":"ubuntu"}`
		return v1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: v1alpha1.MachineSpec{ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(raw)}},
				Versions: v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"}}}
	}
	md := template("m1.small", map[string]string{"workerset": "pool1"})
	hash := templateHash(&md)
	withHash := func(name, flavor, h string) *setState {
		tm := template(flavor, map[string]string{"workerset": "pool1", v1alpha1.MachineTemplateHashLabel: h})
		return &setState{ms: &v1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{v1alpha1.MachineTemplateHashLabel: h}}, Spec: v1alpha1.MachineSetSpec{Template: tm}}}
	}
	// inPlace gives a set's template other Node labels, annotations and taints and Machine
	// annotations than md's.
	inPlace := func(s *setState) *setState {
		tm := &s.ms.Spec.Template
		tm.Annotations = map[string]string{"example.com/owner": "b"}
		tm.Spec.Labels, tm.Spec.Annotations = map[string]string{"env": "prod"}, map[string]string{"a": "b"}
		tm.Spec.Taints = []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectNoSchedule}}
		return s
	}
	tests := []struct {
		name string
		sets []*setState
		want string // name of the current set, "" for none
	}{
		{"no sets", nil, ""},
		{"own hash", []*setState{withHash("old", "m1.large", "x"), withHash("own", "m1.small", hash)}, "own"},
		{"another controller's hash, same template", []*setState{withHash("kubermatic", "m1.small", "5c9f7d8b4")}, "kubermatic"},
		{"own hash wins over an equal template", []*setState{withHash("kubermatic", "m1.small", "5c9f7d8b4"), withHash("own", "m1.small", hash)}, "own"},
		{"another template is not current", []*setState{withHash("kubermatic", "m1.large", "5c9f7d8b4")}, ""},
		{"only in-place fields differ: the same set, under its hash", []*setState{inPlace(withHash("own", "m1.small", hash))}, "own"},
		{"only in-place fields differ: the same set, under an older hash", []*setState{inPlace(withHash("before", "m1.small", "6b7c9d"))}, "before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := currentSet(tt.sets, &md, hash)
			name := ""
			if got != nil {
				name = got.ms.Name
			}
			if name != tt.want {
				t.Fatalf("current set = %q, want %q", name, tt.want)
			}
		})
	}
}
