package cloudtest

import "encoding/json"

// CloudProvider is the providerSpec.value.cloudProvider of the fake.
func (p *Provider) CloudProvider() string { return "fake" }

// CloudProviderSpec is a providerSpec.value.cloudProviderSpec the fake accepts (it reads none).
func (p *Provider) CloudProviderSpec() json.RawMessage { return json.RawMessage(`{"flavor":"small"}`) }
