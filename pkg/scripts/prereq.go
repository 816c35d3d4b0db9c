package scripts

import (
	"fmt"
	"net"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// KubeletResolvConf is the resolver file Prerequisites keeps on every host for the kubelet: a
// link to /etc/resolv.conf or systemd-resolved's file when those name real servers, else a
// file naming PrereqParams.UpstreamDNS. Point the kubelet's resolvConf at it (see
// kubeadm.KubeletParams) when any host's /etc/resolv.conf names only loopback servers.
const KubeletResolvConf = "/etc/slipway/resolv.conf"

// KubeadmConfigDir holds the kubeadm configurations that apply renders, each only while kubeadm
// runs: they hold bootstrap tokens and certificate keys. Prerequisites removes any left over by
// a run that was killed, or by an older slipway that kept them.
const KubeadmConfigDir = "/etc/slipway/kubeadm"

// PrereqParams configure Prerequisites.
type PrereqParams struct {
	// Cluster is the loaded (defaulted and validated) manifest.
	Cluster *v1beta1.Cluster
	// SandboxImage is containerd's pod sandbox image; kubeadm.PauseImage gives the one kubeadm
	// expects.
	SandboxImage string
	// RegistryCAs are the PEM contents of each registry's tlsConfig.caFile, by registry name,
	// read on the operator's machine.
	RegistryCAs map[string][]byte
	// UpstreamDNS are DNS servers (IP addresses) for KubeletResolvConf on hosts whose
	// /etc/resolv.conf and systemd-resolved name only loopback servers. Without them such a
	// host fails with a message that says so.
	UpstreamDNS []string
	// CredentialsDir, when set, keeps the registries' credentials and the proxy out of the
	// script: it reads them on the host from the files of NodeCredentials in this directory,
	// and fails naming a file that is missing. Empty: the script carries them, as it does for
	// the hosts apply reaches over SSH.
	CredentialsDir string
}

// tool is a command the host needs and the package that provides it.
type tool struct{ Command, Package string }

// containerd itself is not among them: slipway installs its release where the host has none
// new enough (see containerdInstall); runc is what its shim runs.
var familyTools = map[Family][]tool{
	Debian: {{"runc", "runc"}, {"curl", "curl"}, {"iptables", "iptables"}, {"conntrack", "conntrack"},
		{"socat", "socat"}, {"ethtool", "ethtool"}, {"ip", "iproute2"}, {"modprobe", "kmod"}},
	RHEL: {{"runc", "runc"}, {"curl", "curl"}, {"iptables", "iptables"}, {"conntrack", "conntrack-tools"},
		{"socat", "socat"}, {"ethtool", "ethtool"}, {"ip", "iproute"}, {"modprobe", "kmod"}},
}

type prereqData struct {
	Family           Family
	Tools            []tool
	Proxy            proxyEnv
	ProxyDropIn      string
	ProxyEnv         string
	ProxyEnvFile     string
	Modules          []string
	Sysctls          []string
	ContainerdConfig string // version 2, for containerd 1.x
	ContainerdV3     string // version 3, for containerd 2
	ContainerdMode   string
	Containerd       containerdInstall
	Registries       []registryFile
	RegistryDirs     []string
	UpstreamDNS      []string
	ResolvConf       string
	KubeadmConfigDir string

	// With a CredentialsDir: the host's files whose content ends config.toml (the
	// credentials), and the one that is the proxy's environment file.
	ContainerdAuthV2, ContainerdAuthV3, ProxyEnvFrom string
}

// Prerequisites returns the script that prepares a host for kubeadm: swap off (now and in
// /etc/fstab), the overlay and br_netfilter modules (and IPVS's with kube-proxy in ipvs mode),
// forwarding sysctls, containerd installed and configured (systemd cgroups, sandbox image, CNI
// directories, registry mirrors, TLS and credentials, proxy), the CNI reference plugins in
// /opt/cni/bin, and KubeletResolvConf. containerd restarts only when its configuration
// changed. With registry credentials the script contains secrets: do not log it.
func Prerequisites(os OS, p PrereqParams) (string, error) {
	family, err := FamilyOf(os)
	if err != nil {
		return "", err
	}
	c := p.Cluster
	if c == nil {
		return "", fmt.Errorf("prerequisites: no cluster")
	}
	if err := checkValue(p.SandboxImage); err != nil {
		return "", fmt.Errorf("sandbox image: %w", err)
	}
	if _, err := name.ParseReference(p.SandboxImage, name.StrictValidation); err != nil {
		return "", fmt.Errorf("sandbox image %q: %w", p.SandboxImage, err)
	}
	for _, s := range p.UpstreamDNS {
		if net.ParseIP(s) == nil {
			return "", fmt.Errorf("upstream DNS server %q is not an IP address", s)
		}
	}
	proxy, err := proxyFor(c)
	if err != nil {
		return "", err
	}
	regs := registries(c)
	files, err := registryFiles(regs, p.RegistryCAs)
	if err != nil {
		return "", err
	}
	_, hasAuth, err := containerdConfigTOML(p.SandboxImage, regs)
	if err != nil {
		return "", err
	}
	inline := regs
	if p.CredentialsDir != "" {
		inline = withoutAuth(regs)
	}
	cfg, _, err := containerdConfigTOML(p.SandboxImage, inline)
	if err != nil {
		return "", err
	}
	cfg3, _, err := containerdConfigV3(p.SandboxImage, inline)
	if err != nil {
		return "", err
	}
	install, err := containerdInstallFor(c)
	if err != nil {
		return "", err
	}
	d := prereqData{
		Family:           family,
		Tools:            familyTools[family],
		Proxy:            proxy,
		Modules:          []string{"overlay", "br_netfilter"},
		Sysctls:          []string{"net.bridge.bridge-nf-call-iptables=1", "net.bridge.bridge-nf-call-ip6tables=1", "net.ipv4.ip_forward=1"},
		ContainerdConfig: cfg,
		ContainerdV3:     cfg3,
		Containerd:       install,
		ContainerdMode:   "0644",
		Registries:       files,
		UpstreamDNS:      p.UpstreamDNS,
		ResolvConf:       KubeletResolvConf,
		ProxyEnvFile:     containerdProxyEnv,
		KubeadmConfigDir: KubeadmConfigDir,
	}
	if proxy.set() {
		d.ProxyDropIn, d.ProxyEnv = proxy.systemdDropIn(containerdProxyEnv), proxy.environmentFile()
	}
	if hasAuth {
		d.ContainerdMode = "0600"
	}
	if p.CredentialsDir != "" {
		if d.Proxy, err = proxy.from(p.CredentialsDir); err != nil {
			return "", err
		}
		if proxy.set() {
			d.ProxyEnv, d.ProxyEnvFrom = "", d.Proxy.From
		}
		if hasAuth {
			if d.ContainerdAuthV2, err = credentialsFile(p.CredentialsDir, CredentialsContainerdV2); err != nil {
				return "", err
			}
			if d.ContainerdAuthV3, err = credentialsFile(p.CredentialsDir, CredentialsContainerdV3); err != nil {
				return "", err
			}
		}
	}
	for _, f := range files {
		d.RegistryDirs = append(d.RegistryDirs, f.Dir)
	}
	if c.ClusterNetwork.KubeProxy.Mode == "ipvs" {
		d.Modules = append(d.Modules, "ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack")
	}
	if strings.Contains(c.ClusterNetwork.PodSubnet, ":") {
		d.Sysctls = append(d.Sysctls, "net.ipv6.conf.all.forwarding=1")
	}
	return render("prerequisites", "swap, kernel modules, sysctls, containerd, CNI plugins, resolver", family, d)
}
