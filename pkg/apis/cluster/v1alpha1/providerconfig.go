package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// ProviderConfig is the decoded form of a Machine's providerSpec.value. It is not an API object
// of its own; it is the envelope every provider and bootstrap renderer reads first.
//
// +kubebuilder:object:generate=false
type ProviderConfig struct {
	// CloudProvider names the provider, e.g. "openstack".
	CloudProvider string `json:"cloudProvider"`
	// CloudProviderSpec is the provider's own settings; each provider decodes it strictly.
	CloudProviderSpec json.RawMessage `json:"cloudProviderSpec,omitempty"`
	// OperatingSystem is one of OperatingSystems: ubuntu or debian.
	OperatingSystem string `json:"operatingSystem"`
	// OperatingSystemSpec holds OS-specific settings such as distUpgradeOnBoot.
	OperatingSystemSpec json.RawMessage `json:"operatingSystemSpec,omitempty"`
	// SSHPublicKeys are authorized for the default user of the machine.
	SSHPublicKeys []string `json:"sshPublicKeys,omitempty"`
	// CAPublicKey is an SSH certificate authority trusted for login, if any.
	CAPublicKey string `json:"caPublicKey,omitempty"`
}

// OperatingSystems are the values of operatingSystem a worker machine can boot with: those whose
// user-data pkg/bootstrap renders, each golden-tested there. It is the one list that the
// manifest's validation (workers[].providerSpec.operatingSystem, and so config
// machinedeployments), the machine-controller's admission webhook and the bootstrap renderer
// accept; flatcar, rhel and rockylinux, which earlier machine-controllers booted, are refused
// until slipway renders and tests their boot (Flatcar needs Ignition rather than cloud-init).
// Callers only read it.
var OperatingSystems = []string{"ubuntu", "debian"}

// DecodeProviderConfig decodes a Machine's providerSpec.value.
func DecodeProviderConfig(spec ProviderSpec) (*ProviderConfig, error) {
	if spec.Value == nil || len(spec.Value.Raw) == 0 {
		return nil, fmt.Errorf("providerSpec.value is empty")
	}
	var pc ProviderConfig
	if err := json.Unmarshal(spec.Value.Raw, &pc); err != nil {
		return nil, fmt.Errorf("decoding providerSpec.value: %w", err)
	}
	return &pc, nil
}
