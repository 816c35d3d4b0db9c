package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// SupportedKubernetesMinors is the inclusive window of Kubernetes minor versions Slipway supports,
// for kubelets of Machines as for the cluster. It is the one place the window is written down;
// CheckKubeletVersion and every error message derive from it.
const SupportedKubernetesMinors = "1.33-1.35"

// supportedWindow parses SupportedKubernetesMinors into its lowest and highest minor.
func supportedWindow() (lo, hi uint64) {
	parts := strings.SplitN(SupportedKubernetesMinors, "-", 2)
	minor := func(s string) uint64 {
		_, m, _ := strings.Cut(s, ".")
		n, _ := strconv.ParseUint(m, 10, 64)
		return n
	}
	return minor(parts[0]), minor(parts[1])
}

// CheckKubeletVersion reports whether v is a semantic version (with or without a leading "v")
// inside the supported window. The error names the window, so an operator knows what to write.
func CheckKubeletVersion(v string) error {
	sv, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	if err != nil {
		return fmt.Errorf("%q is not a semantic version such as 1.34.1: %w", v, err)
	}
	lo, hi := supportedWindow()
	if sv.Major() != 1 || sv.Minor() < lo || sv.Minor() > hi {
		return fmt.Errorf("kubelet %s is outside the supported Kubernetes versions %s (minor versions 1.%d to 1.%d)",
			v, SupportedKubernetesMinors, lo, hi)
	}
	return nil
}
