package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestConformance is issue 22: sandbox hosts, an HA cluster (3 control planes behind the load
// balancer, 2 static workers) installed by slipway apply at the current version, then the
// Kubernetes conformance suite of the same release against it. By default it runs the subset
// that CI runs (test/conformance/subset.txt, about 4 minutes); SLIPWAY_CONFORMANCE_FULL=1 (make
// conformance FULL=1) runs every [Conformance] spec. The JUnit report, the suite's log and a
// summary go to test/conformance/results (SLIPWAY_CONFORMANCE_REPORT_DIR to change it);
// SLIPWAY_CONFORMANCE_SPECS names another list of specs than the subset (a file like subset.txt,
// relative to the repository's root; make conformance SPECS=...), to rerun some;
// SLIPWAY_CONFORMANCE_PROCS sets ginkgo's parallelism and SLIPWAY_CONFORMANCE_TIMEOUT bounds the
// suite. The suite is built by test/conformance/build.sh (cached; .ci/run builds it first).
func TestConformance(t *testing.T) {
	t.Parallel()  // with the other e2e tests, one at a time under make test-e2e's -parallel 1
	needDocker(t) // before the suite's build, which is long when cold: -short skips here
	suite := buildConformance(t)
	h := upSandboxWith(t, "conformance", "172.30.249.0/24", 5, 3, true, []string{current})
	nodes := []string{"cp-1", "cp-2", "cp-3", "worker-1", "worker-2"}
	manifest := h.writeManifest("conformance.yaml", manifestParams{Version: current,
		ControlPlanes: h.hosts("cp-1", "cp-2", "cp-3"), Workers: h.hosts("worker-1", "worker-2")})
	h.mustApply(manifest)
	h.expectNodes(h.kube("e2e"), nodes, current)
	h.pushConformanceImages(suite)

	full := os.Getenv("SLIPWAY_CONFORMANCE_FULL") == "1"
	dir := os.Getenv("SLIPWAY_CONFORMANCE_REPORT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "conformance", "results")
	}
	procs := 4
	if p := os.Getenv("SLIPWAY_CONFORMANCE_PROCS"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			t.Fatalf("SLIPWAY_CONFORMANCE_PROCS=%q: want a positive number", p)
		}
		procs = n
	}
	timeout := 30 * time.Minute
	if full {
		timeout = 3 * time.Hour
	}
	if v := os.Getenv("SLIPWAY_CONFORMANCE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("SLIPWAY_CONFORMANCE_TIMEOUT=%q: want a duration such as 90m", v)
		}
		timeout = d
	}
	specs := conformanceSubsetFile
	if f := os.Getenv("SLIPWAY_CONFORMANCE_SPECS"); f != "" {
		specs = f
	}
	h.runConformance(suite, filepath.Join(h.dir, "e2e-kubeconfig"), conformanceOptions{Full: full, SpecsFile: specs, Procs: procs, ReportDir: dir, Timeout: timeout})
}
