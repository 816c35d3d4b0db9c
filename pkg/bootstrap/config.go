package bootstrap

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"golang.org/x/crypto/ssh"
)

// Config is everything a new Machine needs to join.
type Config struct {
	// OperatingSystem is "ubuntu" or "debian".
	OperatingSystem string
	// KubeletVersion is the kubelet and kubeadm version, e.g. 1.36.3 (a leading v is allowed).
	KubeletVersion string
	// APIServerEndpoint is the host:port kubeadm join discovers the cluster through.
	APIServerEndpoint string
	// CACertHash pins the cluster CA: "sha256:<64 hex digits>".
	CACertHash string
	// Token is the bootstrap token "<6>.<16>" of lowercase letters and digits.
	Token string
	// PackageRepository is the base URL of the apt repository, default https://pkgs.k8s.io; the
	// path /core:/stable:/v1.<minor>/deb/ is appended as on pkgs.k8s.io.
	PackageRepository string
	// SSHPublicKeys are authorized for the image's default user.
	SSHPublicKeys []string
	// Taints are registered by the kubelet with the Node, before any pod can be scheduled.
	Taints []Taint
	// ExternalCloudProvider makes the kubelet wait for a cloud-controller-manager.
	ExternalCloudProvider bool
	// DistUpgradeOnBoot upgrades every package before the install.
	DistUpgradeOnBoot bool
}

// Taint is a taint registered with the Node.
type Taint struct {
	Key, Value, Effect string
}

var (
	tokenRe   = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	hashRe    = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	hostRe    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
	taintKey  = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	taintVal  = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
	effects   = map[string]bool{"NoSchedule": true, "PreferNoSchedule": true, "NoExecute": true}
	supported = map[string]bool{"ubuntu": true, "debian": true}
)

// validate rejects every value that could break out of the YAML or the shell script, so that
// rendering never has to trust its input.
func (c Config) validate() (*semver.Version, error) {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	switch {
	case c.OperatingSystem == "flatcar":
		bad("operating system flatcar is not supported yet (it needs Ignition, see the package documentation)")
	case !supported[c.OperatingSystem]:
		bad("operating system %q is not supported: want ubuntu or debian", c.OperatingSystem)
	}
	v, err := semver.StrictNewVersion(strings.TrimPrefix(c.KubeletVersion, "v"))
	if err != nil || v.Prerelease() != "" || v.Metadata() != "" {
		bad("kubelet version %q is not a release version such as 1.36.3", c.KubeletVersion)
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
	if u, err := url.Parse(c.PackageRepository); err != nil || (u.Scheme != "https" && u.Scheme != "http") ||
		u.Host == "" || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(c.PackageRepository, "'\"\\ `$\n") {
		bad("package repository %q is not a plain http(s) URL", c.PackageRepository)
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
