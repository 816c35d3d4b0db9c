package bootstrap

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/crypto/ssh"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// Config is everything a new Machine needs to join: its own half (operating system, kubelet
// version, bootstrap token, keys, taints) and the cluster's (Settings, which apply wrote).
type Config struct {
	// OperatingSystem is one of v1alpha1.OperatingSystems (ubuntu, debian): the list that
	// validation and admission accept is the list of what Render renders.
	OperatingSystem string
	// KubeletVersion is the kubelet and kubeadm version, e.g. 1.36.3 (a leading v is allowed).
	// It must be in slipway's window of supported versions.
	KubeletVersion string
	// APIServerEndpoint is the host:port kubeadm join discovers the cluster through.
	APIServerEndpoint string
	// CACertHash pins the cluster CA: "sha256:<64 hex digits>".
	CACertHash string
	// Token is the bootstrap token "<6>.<16>" of lowercase letters and digits.
	Token string
	// SSHPublicKeys are authorized for the image's default user.
	SSHPublicKeys []string
	// Taints are registered by the kubelet with the Node, before any pod can be scheduled.
	Taints []Taint
	// DistUpgradeOnBoot upgrades every package before the install.
	DistUpgradeOnBoot bool
	// Settings are the cluster-wide settings: containerd, registries, proxy, asset source,
	// cloud provider.
	Settings Settings
}

// Taint is a taint registered with the Node.
type Taint struct {
	Key, Value, Effect string
}

var (
	tokenRe  = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	hashRe   = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	hostRe   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
	taintKey = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	taintVal = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
	effects  = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}
)

// validate rejects every value that could break out of the YAML or the shell script, so that
// rendering never has to trust its input.
func (c Config) validate() (*semver.Version, error) {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	switch {
	case c.OperatingSystem == "flatcar":
		bad("operating system flatcar is not supported yet (it needs Ignition, see the package documentation)")
	case !slices.Contains(v1alpha1.OperatingSystems, c.OperatingSystem):
		bad("operating system %q is not supported: want one of %s", c.OperatingSystem, strings.Join(v1alpha1.OperatingSystems, ", "))
	}
	v, err := semver.StrictNewVersion(strings.TrimPrefix(c.KubeletVersion, "v"))
	switch {
	case err != nil || v.Prerelease() != "" || v.Metadata() != "":
		bad("kubelet version %q is not a release version such as 1.36.3", c.KubeletVersion)
	case !kubeversion.Supported(v.Major(), v.Minor()):
		bad("kubelet version %q is outside slipway's supported versions (%s)", c.KubeletVersion, kubeversion.Text)
	}
	host, port, err := net.SplitHostPort(c.APIServerEndpoint)
	if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 1 || p > 65535 ||
		(net.ParseIP(host) == nil && !hostRe.MatchString(host)) {
		bad("API server endpoint %q is not host:port", c.APIServerEndpoint)
	}
	if !hashRe.MatchString(c.CACertHash) {
		bad("CA certificate hash %q is not sha256:<64 lowercase hex digits>", c.CACertHash)
	}
	if !tokenRe.MatchString(c.Token) {
		bad("bootstrap token is not of the form [a-z0-9]{6}.[a-z0-9]{16}")
	}
	if c.Settings.Cluster.Assets.Upload != nil {
		bad("the manifest's assets.upload cannot install pool machines: nothing uploads to a machine that boots on its own; use assets.packages or assets.url")
	}
	for i, k := range c.SSHPublicKeys {
		if _, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(k)); err != nil || len(rest) != 0 || strings.ContainsAny(k, "\n\r") {
			bad("SSH public key %d does not parse as one authorized_keys line", i)
		}
	}
	for i, t := range c.Taints {
		if !taintKey.MatchString(t.Key) || !taintVal.MatchString(t.Value) || !effects[t.Effect] {
			bad("taint %d (%s=%s:%s) is not a valid taint", i, t.Key, t.Value, t.Effect)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid bootstrap configuration: %s", strings.Join(errs, "; "))
	}
	return v, nil
}
