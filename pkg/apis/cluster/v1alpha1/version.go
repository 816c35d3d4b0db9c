package v1alpha1

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// SupportedKubernetesMinors is the inclusive window of Kubernetes minor versions Slipway supports,
// for kubelets of Machines as for the cluster ("1.35-1.37"). It comes from package kubeversion,
// where the window is written down once; CheckKubeletVersion and every error message use it.
var SupportedKubernetesMinors = kubeversion.Minors

// CheckKubeletVersion reports whether v is a semantic version (with or without a leading "v")
// inside the supported window. The error names the window, so an operator knows what to write.
func CheckKubeletVersion(v string) error {
	sv, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	if err != nil {
		return fmt.Errorf("%q is not a semantic version such as 1.36.3: %w", v, err)
	}
	if !kubeversion.Supported(sv.Major(), sv.Minor()) {
		return fmt.Errorf("kubelet %s is outside the supported Kubernetes versions %s", v, SupportedKubernetesMinors)
	}
	return nil
}
