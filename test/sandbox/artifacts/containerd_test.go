package artifacts

import (
	"testing"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// Slipway downloads <baseURL>/v<its version>/...: a sandbox serving another version breaks every
// install on containerd 2.
func TestContainerdVersionIsSlipways(t *testing.T) {
	c, err := kubeversion.ContainerdFor(36)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != ContainerdVersion {
		t.Errorf("the sandbox serves containerd %s but slipway installs %s for v1.36: change ContainerdVersion", ContainerdVersion, c.Version)
	}
	if got, want := containerdTarball(ContainerdVersion), "containerd-"+c.Version+"-linux-amd64.tar.gz"; got != want {
		t.Errorf("containerdTarball = %s, want %s", got, want)
	}
}
