package terraform

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// FuzzParse feeds arbitrary documents to the Terraform output parser and merges whatever parses
// into an empty manifest: neither may panic.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	files = append(files, "../../examples/openstack-tf-output.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data)
		if err != nil {
			return
		}
		var c v1beta1.Cluster
		Merge(&c, nil, o)
	})
}
