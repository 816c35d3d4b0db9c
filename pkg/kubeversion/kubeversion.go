// Package kubeversion is where the Kubernetes versions Slipway supports are written down, once:
// the window of minors, and the containerd each minor is installed with. The manifest API, the
// machine-controller's webhook, `slipway version` and the reference all read it from here.
//
// It is a leaf package: it imports nothing of Slipway's, so that every layer may use it.
package kubeversion

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/Masterminds/semver/v3"
)

// The supported window of Kubernetes minors (1.MinMinor to 1.MaxMinor, inclusive). The newest is
// the one tested end to end first; the oldest is kept so that clusters can be upgraded out of it.
const (
	MinMinor = 35
	MaxMinor = 37
)

// Minors is the window in the short form error messages and the webhook use: "1.35-1.37".
var Minors = fmt.Sprintf("1.%d-1.%d", MinMinor, MaxMinor)

// Text is the window for prose and errors: "v1.35 to v1.37".
var Text = fmt.Sprintf("v1.%d to v1.%d", MinMinor, MaxMinor)

// List is the window spelled out for documentation: "v1.35, v1.36 and v1.37".
func List() string {
	s := ""
	for m := MinMinor; m <= MaxMinor; m++ {
		switch {
		case m == MinMinor:
		case m == MaxMinor:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprintf("v1.%d", m)
	}
	return s
}

// Supported reports whether 1.minor is inside the window.
func Supported(major, minor uint64) bool {
	return major == 1 && minor >= MinMinor && minor <= MaxMinor
}

// Containerd is what Slipway does about containerd for one Kubernetes minor.
type Containerd struct {
	// Version is the containerd release Slipway installs where a node has none, or one older than
	// Minimum.
	Version string
	// Minimum is the oldest containerd a node may keep. Kubernetes v1.35 is the last release that
	// supports containerd 1.x; from v1.36 on, a node must run containerd 2.
	Minimum string
}

// Replaces reports whether a host whose `containerd --version` printed have (empty when there
// is none) gets this policy's release: when it has none, an unreadable one, or one older than
// Minimum.
func (p Containerd) Replaces(have string) bool {
	if have == "" {
		return true
	}
	v, err := ParseContainerdVersion(have)
	if err != nil {
		return true
	}
	min, err := ParseContainerdVersion(p.Minimum)
	return err == nil && v.LessThan(min)
}

// containerdInstall is the containerd release installed on new nodes and on nodes moved across
// the 1 → 2 line.
const containerdInstall = "2.2.9"

// ContainerdFor returns the containerd policy for Kubernetes 1.minor, which must be inside the
// window.
func ContainerdFor(minor uint64) (Containerd, error) {
	if minor < MinMinor || minor > MaxMinor {
		return Containerd{}, fmt.Errorf("v1.%d is outside the supported Kubernetes versions %s", minor, Text)
	}
	if minor <= 35 {
		return Containerd{Version: containerdInstall, Minimum: "1.6.0"}, nil
	}
	return Containerd{Version: containerdInstall, Minimum: "2.0.0"}, nil
}

// numericPrefix is the version number at the start of what `containerd --version` or a package
// manager prints: "1.6.20" of "1.6.20~ds1-1+deb12u1", "2.2.9" of "v2.2.9".
var numericPrefix = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?`)

// ParseContainerdVersion reads the numeric version at the start of s, as distributions spell it
// ("1.6.20~ds1", "1.7.24-0ubuntu1", "v2.2.9"). Suffixes that are not semantic-version pre-releases
// are ignored rather than misread: a Debian revision is not a pre-release.
func ParseContainerdVersion(s string) (*semver.Version, error) {
	m := numericPrefix.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("%q does not start with a version number such as 1.7.24", s)
	}
	parts := [3]uint64{}
	for i, p := range m[1:] {
		if p == "" {
			continue
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		parts[i] = n
	}
	return semver.New(parts[0], parts[1], parts[2], "", ""), nil
}
