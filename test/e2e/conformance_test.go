//go:build conformance

package e2e

import (
	"path/filepath"
	"testing"
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
