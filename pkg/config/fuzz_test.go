package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// FuzzManifest feeds arbitrary documents through the whole manifest pipeline (strict decoding,
// defaults, validation): none may panic, whatever the input.
func FuzzManifest(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	examples, _ := filepath.Glob("../../examples/*.yaml")
	for _, p := range append(files, examples...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(v1beta1.Reference()))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := Decode(data)
		if err != nil {
			return
		}
		v1beta1.SetDefaults(c, "test")
		v1beta1.Validate(c)
	})
}
