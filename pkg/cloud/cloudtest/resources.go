package cloudtest

import (
	"context"
	"encoding/json"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Flavors are the in-memory cloud's flavors, by the name a cloudProviderSpec gives as "flavor".
var Flavors = map[string]cloud.Resources{
	"small": {CPU: 2, MemoryMiB: 4096, DiskGiB: 20},
	"large": {CPU: 8, MemoryMiB: 16384, DiskGiB: 80},
}

var _ cloud.ResourceReader = (*Provider)(nil)

// Resources returns the resources of the spec's flavor (Flavors); an unknown flavor is a
// terminal error, as the real cloud's is.
func (p *Provider) Resources(_ context.Context, template *v1alpha1.Machine) (cloud.Resources, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unreachable {
		return cloud.Resources{}, errUnreachable
	}
	pc, err := v1alpha1.DecodeProviderConfig(template.Spec.ProviderSpec)
	if err != nil {
		return cloud.Resources{}, cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "%v", err)
	}
	var spec struct {
		Flavor string `json:"flavor"`
	}
	if err := json.Unmarshal(pc.CloudProviderSpec, &spec); err != nil {
		return cloud.Resources{}, cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "cloudProviderSpec: %v", err)
	}
	r, ok := Flavors[spec.Flavor]
	if !ok {
		return cloud.Resources{}, cloud.Terminal(v1alpha1.InvalidConfigurationMachineError, "flavor %q not found", spec.Flavor)
	}
	return r, nil
}
