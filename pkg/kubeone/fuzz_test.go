package kubeone_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/kubeone"
)

// FuzzConvert feeds arbitrary documents through the conversion and the rendering of its result:
// none may panic, whatever the input.
func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add([]byte(strings.ReplaceAll(string(data), "VERSION", version)))
		}
	}
	f.Add([]byte(doc("v1beta3", "clusterNetwork: {cni: {cilium: {kubeProxyReplacement: 3}}}\ndynamicWorkers: [{name: p, providerSpec: {cloudProviderSpec: {tags: [1], securityGroups: {a: b}, rootDiskSizeGB: 1.5}}}]\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := kubeone.Convert(data, kubeone.Terraform{})
		if err != nil {
			return
		}
		if _, err := res.Manifest("fuzz.yaml"); err != nil {
			t.Fatalf("a converted cluster does not render: %v", err)
		}
	})
}
