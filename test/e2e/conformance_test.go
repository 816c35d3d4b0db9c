//go:build conformance

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestConformance is make conformance (issue 22): sandbox hosts, an HA cluster (3 control planes
// behind the load balancer, 2 static workers) installed by slipway apply at the current version,
// then the Kubernetes conformance suite of the same release against it. By default it runs CI's
// subset (test/conformance/subset.txt); SLIPWAY_CONFORMANCE_FULL=1 (make conformance FULL=1)
// runs every [Conformance] spec, and the other SLIPWAY_CONFORMANCE_* variables are read by
// conformanceOptionsFromEnv. The JUnit report, the suite's log and a summary go to
// test/conformance/results. The suite is built by test/conformance/build.sh (cached).
//
// It builds only with -tags conformance: make test-e2e runs the same subset on TestPools' HA
// cluster, whose workers are the pool's machines, rather than on a cluster of its own.
func TestConformance(t *testing.T) {
	needDocker(t) // before the suite's build, which is long when cold: -short skips here
	suite := buildConformance(t)
	h := upSandboxWith(t, "conformance", "172.30.249.0/24", 5, 3, true, []string{current})
	nodes := []string{"cp-1", "cp-2", "cp-3", "worker-1", "worker-2"}
	manifest := h.writeManifest("conformance.yaml", manifestParams{Version: current,
		ControlPlanes: h.hosts("cp-1", "cp-2", "cp-3"), Workers: h.hosts("worker-1", "worker-2")})
	h.mustApply(manifest)
	h.expectNodes(h.kube("e2e"), nodes, current)
	h.pushConformanceImages(suite)
	h.runConformance(suite, filepath.Join(h.dir, "e2e-kubeconfig"), conformanceOptionsFromEnv(t))
}

// conformanceOptionsFromEnv reads what make conformance passes: SLIPWAY_CONFORMANCE_FULL=1 for
// every [Conformance] spec, SLIPWAY_CONFORMANCE_SPECS for another list than the subset,
// SLIPWAY_CONFORMANCE_PROCS (default 4), SLIPWAY_CONFORMANCE_TIMEOUT (default 30 minutes, 3
// hours for a full run) and SLIPWAY_CONFORMANCE_REPORT_DIR (default test/conformance/results).
// Without them it is conformanceSubsetOptions.
func conformanceOptionsFromEnv(t *testing.T) conformanceOptions {
	t.Helper()
	o := conformanceSubsetOptions()
	o.Full = os.Getenv("SLIPWAY_CONFORMANCE_FULL") == "1"
	if d := os.Getenv("SLIPWAY_CONFORMANCE_REPORT_DIR"); d != "" {
		o.ReportDir = d
	}
	if p := os.Getenv("SLIPWAY_CONFORMANCE_PROCS"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			t.Fatalf("SLIPWAY_CONFORMANCE_PROCS=%q: want a positive number", p)
		}
		o.Procs = n
	}
	if o.Full {
		o.Timeout = 3 * time.Hour
	}
	if v := os.Getenv("SLIPWAY_CONFORMANCE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("SLIPWAY_CONFORMANCE_TIMEOUT=%q: want a duration such as 90m", v)
		}
		o.Timeout = d
	}
	if f := os.Getenv("SLIPWAY_CONFORMANCE_SPECS"); f != "" {
		o.SpecsFile = f
	}
	return o
}
