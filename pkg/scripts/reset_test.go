package scripts_test

import (
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestResetGolden(t *testing.T) {
	tests := []struct {
		name   string
		os     scripts.OS
		remove bool
		assets *v1beta1.Assets
	}{
		{"reset-debian", scripts.OS{ID: "debian", VersionID: "12"}, false, nil},
		{"reset-debian-remove-packages", scripts.OS{ID: "ubuntu", VersionID: "24.04"}, true, nil},
		{"reset-debian-remove-binaries", scripts.OS{ID: "debian", VersionID: "12"}, true,
			&v1beta1.Assets{URL: &v1beta1.URLAssets{BaseURL: "https://dl.k8s.io/release"}}},
		{"reset-rhel-remove-packages", scripts.OS{ID: "rocky", VersionID: "9.4"}, true, nil},
		{"reset-flatcar-remove-binaries", scripts.OS{ID: "flatcar", VersionID: "4081.2.0"}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, "minimal")
			if tt.assets != nil {
				c.Assets = *tt.assets
			}
			got, err := scripts.Reset(tt.os, scripts.ResetParams{Cluster: c, RemoveBinaries: tt.remove})
			if err != nil {
				t.Fatal(err)
			}
			checkScript(t, tt.name, got)
		})
	}
	checkScript(t, "restart-kubelet", scripts.RestartKubelet())
}
