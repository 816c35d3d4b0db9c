package workers

import (
	"reflect"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func mdWith(name, kubelet string) *v1alpha1.MachineDeployment {
	md := &v1alpha1.MachineDeployment{}
	md.Name = name
	md.Spec.Template.Spec.Versions.Kubelet = kubelet
	return md
}

func TestPinKubelet(t *testing.T) {
	tests := []struct {
		name          string
		declared      []string
		existing      map[string]string
		upgrade       bool
		wantVersions  []string
		wantChanged   []KubeletUpgrade
		wantUndeclare []string
	}{
		{
			name:         "new pools get the manifest version",
			declared:     []string{"a", "b"},
			existing:     map[string]string{},
			wantVersions: []string{"1.36.3", "1.36.3"},
		},
		{
			name:         "existing pools keep their version without the flag",
			declared:     []string{"a", "b"},
			existing:     map[string]string{"a": "1.35.4", "other": "1.35.4"},
			wantVersions: []string{"1.35.4", "1.36.3"},
		},
		{
			name:          "the flag bumps declared and undeclared pools",
			declared:      []string{"a", "b"},
			existing:      map[string]string{"a": "1.35.4", "other": "v1.35.4", "current": "1.36.3"},
			upgrade:       true,
			wantVersions:  []string{"1.36.3", "1.36.3"},
			wantChanged:   []KubeletUpgrade{{"a", "1.35.4", "1.36.3"}, {"other", "v1.35.4", "1.36.3"}},
			wantUndeclare: []string{"other"},
		},
		{
			name:         "the flag on a current cluster changes nothing",
			declared:     []string{"a"},
			existing:     map[string]string{"a": "v1.36.3"},
			upgrade:      true,
			wantVersions: []string{"1.36.3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mds []*v1alpha1.MachineDeployment
			for _, n := range tt.declared {
				mds = append(mds, mdWith(n, "1.36.3"))
			}
			changed, undeclared := PinKubelet(mds, tt.existing, "v1.36.3", tt.upgrade)
			var got []string
			for _, md := range mds {
				got = append(got, md.Spec.Template.Spec.Versions.Kubelet)
			}
			if !reflect.DeepEqual(got, tt.wantVersions) {
				t.Errorf("versions = %v, want %v", got, tt.wantVersions)
			}
			if !reflect.DeepEqual(changed, tt.wantChanged) {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if !reflect.DeepEqual(undeclared, tt.wantUndeclare) {
				t.Errorf("undeclared = %v, want %v", undeclared, tt.wantUndeclare)
			}
		})
	}
}
