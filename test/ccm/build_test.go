package ccm

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/slipway-dev/slipway/test/gosum"
)

// TestBuildVerifiesSums runs build.sh on copies of build/ccm whose go.sum was tampered with
// (see test/gosum): gophercloud is the CCM's OpenStack client, and a changed copy of it the
// attack. The caller's GOFLAGS=-mod=mod must not loosen the build.
func TestBuildVerifiesSums(t *testing.T) {
	if testing.Short() {
		t.Skip("runs build.sh, which reads the CCM's modules from the module cache or the Go module proxy; skipped under -short")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "build.sh")
	module := filepath.Join(filepath.Dir(file), "..", "..", "build", "ccm")
	gosum.CheckRefused(t, module, "github.com/gophercloud/gophercloud/v2", "v2.8.0", func(dir, cache string) *exec.Cmd {
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "SLIPWAY_CCM_MODULE="+dir, "SLIPWAY_CACHE="+cache, "GOFLAGS=-mod=mod")
		return cmd
	}, func(cache string) []string {
		bins, _ := filepath.Glob(filepath.Join(cache, "ccm", "*", "bin", "*"))
		return bins
	})
}
