package controller

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps the controllers cloud-neutral: they reach clouds only through
// pkg/cloud.Provider, never through a cloud SDK or a provider package. It also keeps kubectl's
// packages out: k8s.io/kubectl/pkg/drain alone made a third of the binary (pkg/drain drains).
// It keeps k8s.io/apiserver out too (CEL, gRPC and OpenTelemetry come with it; metricsauth.go
// checks the metrics' readers with two API calls instead). It checks the manager and every
// controller package under it, wired or not.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list; skipped under -short")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/slipway-dev/slipway/pkg/controller/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/gophercloud/", "github.com/slipway-dev/slipway/pkg/cloud/openstack", "github.com/slipway-dev/slipway/pkg/cli", "k8s.io/kubectl/", "k8s.io/apiserver/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("pkg/controller/... depends on %s", dep)
			}
		}
	}
}
