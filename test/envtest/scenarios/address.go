package scenarios

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/test/envtest"
)

// AddressFallback registers Nodes without a provider ID, as kubelets without a cloud provider
// do: the controller must match them to their Machines by address.
func AddressFallback(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil, envtest.WithoutProviderID())
	f.create(f.deployment("byaddr", 2, intstr.FromInt32(1), intstr.FromInt32(0)))
	for _, m := range f.waitRunning(2) {
		f.checkNode(&m)
	}
}
