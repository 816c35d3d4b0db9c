package envtest

import (
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlaneTimeout is how long etcd and kube-apiserver may take to start (each) and to stop.
// controller-runtime's default, 20 s, is too short where test-integration runs on two cores:
// several packages start their own kube-apiserver at once beside compiling test binaries, and a
// start that took longer was killed and retried until all five tries failed (seen in
// test/ccm). A healthy start takes a few seconds, so the longer limit costs nothing then.
const ControlPlaneTimeout = 2 * time.Minute

// StartOwn starts a kube-apiserver and etcd of the test's own, without the shared
// environment's CRDs, RBAC and webhook: for a test that needs other API server flags
// (configure sets them) or a bare API server. They stop when the test ends. It skips under
// -short, and where the binaries are missing, unless CI=true, where that fails the test.
func StartOwn(t testing.TB, configure func(*crenvtest.Environment)) (*rest.Config, *crenvtest.Environment) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a kube-apiserver and etcd; skipped under -short")
	}
	bin, err := BinaryDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	env := &crenvtest.Environment{BinaryAssetsDirectory: bin, ControlPlaneStartTimeout: ControlPlaneTimeout, ControlPlaneStopTimeout: ControlPlaneTimeout}
	if configure != nil {
		configure(env)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatalf("starting kube-apiserver and etcd from %s: %v", bin, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})
	return cfg, env
}
