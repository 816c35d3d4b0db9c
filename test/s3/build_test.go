package s3_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/test/gosum"
)

// TestBuildVerifiesSums runs build.sh on copies of test/s3/versitygw whose go.sum was tampered
// with (see test/gosum): versitygw itself is what a changed copy would swap for a server that
// keeps, or leaks, the snapshots the tests upload. The caller's GOFLAGS=-mod=mod must not loosen
// the build.
func TestBuildVerifiesSums(t *testing.T) {
	if testing.Short() {
		t.Skip("runs build.sh, which reads versitygw's modules from the module cache or the Go module proxy; skipped under -short")
	}
	script, err := filepath.Abs("build.sh")
	if err != nil {
		t.Fatal(err)
	}
	gosum.CheckRefused(t, "versitygw", "github.com/versity/versitygw", "v1.8.0", func(dir, cache string) *exec.Cmd {
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "SLIPWAY_S3_MODULE="+dir, "SLIPWAY_CACHE="+cache, "GOFLAGS=-mod=mod")
		return cmd
	}, func(cache string) []string {
		bins, _ := filepath.Glob(filepath.Join(cache, "s3", "*", "versitygw"))
		return bins
	})
}
