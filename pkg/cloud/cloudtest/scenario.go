package cloudtest

import (
	"encoding/json"

	"github.com/slipway-dev/slipway/pkg/cloud"
)

// CloudProvider is the providerSpec.value.cloudProvider of the fake.
func (p *Provider) CloudProvider() string { return "fake" }

// CloudProviderSpec is a providerSpec.value.cloudProviderSpec the fake accepts (it reads only the flavor, for Resources).
func (p *Provider) CloudProviderSpec() json.RawMessage { return json.RawMessage(`{"flavor":"small"}`) }

// FlavorResources are those of CloudProviderSpec's flavor.
func (p *Provider) FlavorResources() cloud.Resources { return Flavors["small"] }
