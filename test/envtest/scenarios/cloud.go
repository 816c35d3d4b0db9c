package scenarios

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Cloud is a provider under test plus the levers a scenario pulls behind the controller's back.
type Cloud interface {
	cloud.Provider
	// CloudProviderSpec returns providerSpec.value.cloudProviderSpec for servers this cloud
	// accepts, and CloudProvider the value of providerSpec.value.cloudProvider.
	CloudProviderSpec() json.RawMessage
	CloudProvider() string
	// RemoveOutOfBand deletes the Machine's server as an operator in the cloud console would.
	RemoveOutOfBand(m *v1alpha1.Machine) error
	// SetDeleteStuck makes the deletion of the Machine's server hang (true) or finish (false).
	SetDeleteStuck(m *v1alpha1.Machine, stuck bool) error
	// SetUnreachable makes every cloud API call fail (true) or work again (false).
	SetUnreachable(down bool)
	// SetInstanceQuota caps how many servers the project may hold (0: no cap), as Nova's
	// instances quota does: a create beyond it is refused for quota.
	SetInstanceQuota(n int)
	// Len returns how many servers exist, including ones being deleted.
	Len() int
	// FlavorResources are what a server of CloudProviderSpec brings, as the cloud's flavor
	// defines it (its vCPUs, RAM and disk; the boot volume's size when the spec boots from one):
	// what the capacity annotations must say.
	FlavorResources() cloud.Resources
}

// NewCloud returns a fresh, empty cloud for one scenario.
type NewCloud func(t *testing.T) Cloud

// providerSpec builds a Machine providerSpec for the cloud.
func providerSpec(t testing.TB, c Cloud) v1alpha1.ProviderSpec {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"cloudProvider":       c.CloudProvider(),
		"cloudProviderSpec":   c.CloudProviderSpec(),
		"operatingSystem":     "ubuntu",
		"operatingSystemSpec": map[string]any{},
		"sshPublicKeys":       []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}
}
