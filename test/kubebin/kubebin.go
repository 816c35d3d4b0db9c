// Package kubebin gives tests real Kubernetes release binaries, built from the Go module proxy
// by test/kube/build.sh and cached, so that a test can ask the real tool instead of restating it.
package kubebin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Kubeadm returns the path of a real kubeadm at version (v1.36.3), building it on first use
// (several minutes cold). It skips t under -short or when the build cannot run, and fails t
// instead when CI=true.
func Kubeadm(t testing.TB, version string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping under -short: needs a kubeadm binary built by test/kube/build.sh")
	}
	unavailable := t.Skipf
	if os.Getenv("CI") == "true" {
		unavailable = t.Fatalf
	}
	if _, err := exec.LookPath("go"); err != nil {
		unavailable("no go toolchain on PATH to build kubeadm with test/kube/build.sh: %v", err)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "kube", "build.sh")
	out, err := exec.Command(script, version, "kubeadm").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		unavailable("building kubeadm with test/kube/build.sh failed: %v\n%s", err, stderr)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "kubeadm")
}
