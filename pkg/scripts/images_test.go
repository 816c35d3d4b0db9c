package scripts_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestImportImages(t *testing.T) {
	got, err := scripts.ImportImages(scripts.ImageArchiveDir+"/slipway-images.tar",
		[]string{"ghcr.io/slipway-dev/machine-controller:v1.2.3", "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"})
	if err != nil {
		t.Fatal(err)
	}
	checkScript(t, "import-images", got)

	for _, tt := range []struct {
		name    string
		archive string
		refs    []string
		want    string
	}{
		{"no image", "/a.tar", nil, "names no image"},
		{"a line break in a reference", "/a.tar", []string{"a.io/b:c\nrm -rf /"}, "line break"},
		{"a line break in the path", "/a\n.tar", []string{"a.io/b:c"}, "line break"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := scripts.ImportImages(tt.archive, tt.refs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ImportImages(%q, %q) = %v, want an error containing %q", tt.archive, tt.refs, err, tt.want)
			}
		})
	}
}
