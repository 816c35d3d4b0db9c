package v1beta1

import (
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// The supported Kubernetes minors: a window of three, written down in package kubeversion.
const (
	MinKubernetesMinor = kubeversion.MinMinor
	MaxKubernetesMinor = kubeversion.MaxMinor
)

// SupportedVersionsText describes the window for error messages: "v1.35 to v1.37".
var SupportedVersionsText = kubeversion.Text

// ErrUnsupportedVersion is ParseKubernetesVersion's error for a release outside the window; it
// names the window.
var ErrUnsupportedVersion = errors.New("unsupported version: slipway supports Kubernetes " + SupportedVersionsText)

// ParseKubernetesVersion parses vX.Y.Z (the "v" is optional) and checks that it is a release
// inside the supported window.
func ParseKubernetesVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(trimV(s))
	if err != nil {
		return nil, fmt.Errorf("must be a version like v1.36.3")
	}
	if v.Prerelease() != "" || v.Metadata() != "" {
		return nil, fmt.Errorf("must be a released version like v1.36.3, without a pre-release or build suffix")
	}
	if !kubeversion.Supported(v.Major(), v.Minor()) {
		return nil, ErrUnsupportedVersion
	}
	return v, nil
}

func trimV(s string) string {
	if len(s) > 0 && s[0] == 'v' {
		return s[1:]
	}
	return s
}
