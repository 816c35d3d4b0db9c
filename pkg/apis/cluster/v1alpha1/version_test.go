package v1alpha1

import (
	"strings"
	"testing"
)

func TestCheckKubeletVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		wantErr string
	}{
		{name: "lowest supported", version: "1.35.0"},
		{name: "highest supported with v", version: "v1.37.2"},
		{name: "too old names the window", version: "1.32.3", wantErr: "kubelet 1.32.3 is outside the supported Kubernetes versions 1.35-1.37"},
		{name: "too new", version: "1.38.0", wantErr: "1.35-1.37"},
		{name: "not semver", version: "latest", wantErr: "not a semantic version"},
		{name: "partial", version: "1.34", wantErr: "not a semantic version"},
		{name: "empty", version: "", wantErr: "not a semantic version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKubeletVersion(tt.version)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckKubeletVersion(%q) = %v, want nil", tt.version, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckKubeletVersion(%q) = %v, want error containing %q", tt.version, err, tt.wantErr)
			}
			if n := strings.Count(err.Error(), "1.35"); n > 1 {
				t.Errorf("CheckKubeletVersion(%q) names the window %d times: %v", tt.version, n, err)
			}
		})
	}
}
