package v1beta1

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// The supported Kubernetes minors: a window of three. The newest is the one slipway is tested
// with end to end first; the oldest is kept so that clusters can be upgraded out of it.
const (
	MinKubernetesMinor = 33
	MaxKubernetesMinor = 35
)

// SupportedVersionsText describes the window for error messages.
var SupportedVersionsText = fmt.Sprintf("v1.%d to v1.%d", MinKubernetesMinor, MaxKubernetesMinor)

// ParseKubernetesVersion parses vX.Y.Z (the "v" is optional) and checks that it is a release
// inside the supported window.
func ParseKubernetesVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(trimV(s))
	if err != nil {
		return nil, fmt.Errorf("must be a version like v1.34.1")
	}
	if v.Prerelease() != "" || v.Metadata() != "" {
		return nil, fmt.Errorf("must be a released version like v1.34.1, without a pre-release or build suffix")
	}
	if v.Major() != 1 || v.Minor() < MinKubernetesMinor || v.Minor() > MaxKubernetesMinor {
		return nil, fmt.Errorf("unsupported version: slipway supports Kubernetes %s", SupportedVersionsText)
	}
	return v, nil
}

func trimV(s string) string {
	if len(s) > 0 && s[0] == 'v' {
		return s[1:]
	}
	return s
}
