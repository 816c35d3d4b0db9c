package scripts

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Facts are what Probe found on a host.
type Facts struct {
	OS OS
	// Arch is `uname -m`: x86_64, aarch64, ...; GoArch gives Kubernetes' name for it.
	Arch     string
	Kernel   string
	Hostname string
	// SwapActive means some swap is on.
	SwapActive bool
	// CgroupVersion is 1 (legacy or hybrid hierarchy) or 2 (unified).
	CgroupVersion int
	// SudoOK means commands can run as root: the user is root or has passwordless sudo.
	SudoOK bool
	// Privileged means the probe itself could read root-only facts (EtcdData).
	Privileged bool

	// ContainerdVersion is the version token `containerd --version` prints (e.g. 1.6.20~ds1),
	// empty when containerd is not installed.
	ContainerdVersion string
	ContainerdActive  bool
	// KubeletVersion, KubeadmVersion and KubectlVersion look like v1.36.3; empty when missing.
	KubeletVersion string
	KubeletActive  bool
	KubeadmVersion string
	KubectlVersion string

	// AdminConf and KubeletConf say whether /etc/kubernetes/admin.conf and kubelet.conf exist:
	// the host was initialised or joined.
	AdminConf   bool
	KubeletConf bool
	// EtcdData means /var/lib/etcd/member exists (a stacked etcd member's data).
	EtcdData bool
	// APIServerCertExpiry is when /etc/kubernetes/pki/apiserver.crt expires; zero when there is
	// no certificate (or no openssl to read it).
	APIServerCertExpiry time.Time

	// ResolvLoopback means /etc/resolv.conf names only loopback DNS servers, so the kubelet
	// needs the resolver file Prerequisites writes (see KubeletResolvConf).
	ResolvLoopback bool
	// ResolvUpstream are the non-loopback DNS servers found in /etc/resolv.conf or, when it has
	// none, in systemd-resolved's /run/systemd/resolve/resolv.conf.
	ResolvUpstream []string
}

// GoArch returns the architecture as Kubernetes downloads name it (amd64, arm64).
func (f Facts) GoArch() (string, error) {
	switch f.Arch {
	case "x86_64", "amd64":
		return "amd64", nil
	case "aarch64", "arm64":
		return "arm64", nil
	}
	return "", fmt.Errorf("unsupported CPU architecture %q: slipway supports x86_64 and aarch64", f.Arch)
}

// requiredFacts must appear in every probe output; their absence means the probe did not run
// to the end.
var requiredFacts = []string{"os_id", "arch", "kernel", "hostname", "swap_active", "cgroup_version", "sudo_ok",
	"containerd_active", "kubelet_active", "admin_conf", "kubelet_conf", "etcd_data", "resolv_loopback"}

// ParseProbe parses the output of the Probe script. Unknown keys are ignored, so that a newer
// probe can report more than an older slipway reads.
func ParseProbe(stdout string) (Facts, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Facts{}, fmt.Errorf("probe output line %q is not key=value", line)
		}
		kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return Facts{}, fmt.Errorf("reading probe output: %w", err)
	}
	var missing []string
	for _, k := range requiredFacts {
		if _, ok := kv[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return Facts{}, fmt.Errorf("probe output lacks %s: the probe did not finish", strings.Join(missing, ", "))
	}
	p := parser{kv: kv}
	f := Facts{
		OS:                  OS{ID: kv["os_id"], VersionID: kv["os_version_id"]},
		Arch:                kv["arch"],
		Kernel:              kv["kernel"],
		Hostname:            kv["hostname"],
		SwapActive:          p.bool("swap_active"),
		CgroupVersion:       p.cgroup(),
		SudoOK:              p.bool("sudo_ok"),
		Privileged:          p.bool("privileged"),
		ContainerdVersion:   kv["containerd_version"],
		ContainerdActive:    p.bool("containerd_active"),
		KubeletVersion:      kv["kubelet_version"],
		KubeletActive:       p.bool("kubelet_active"),
		KubeadmVersion:      kv["kubeadm_version"],
		KubectlVersion:      kv["kubectl_version"],
		AdminConf:           p.bool("admin_conf"),
		KubeletConf:         p.bool("kubelet_conf"),
		EtcdData:            p.bool("etcd_data"),
		APIServerCertExpiry: p.time("apiserver_cert_expiry"),
		ResolvLoopback:      p.bool("resolv_loopback"),
	}
	if up := kv["resolv_upstream"]; up != "" {
		f.ResolvUpstream = strings.Split(up, ",")
	}
	return f, errors.Join(p.errs...)
}

// parser converts values and collects every problem, not just the first.
type parser struct {
	kv   map[string]string
	errs []error
}

func (p *parser) bool(k string) bool {
	v, ok := p.kv[k]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil || (v != "true" && v != "false") {
		p.errs = append(p.errs, fmt.Errorf("probe fact %s=%q is not true or false", k, v))
	}
	return b
}

func (p *parser) cgroup() int {
	switch v := p.kv["cgroup_version"]; v {
	case "1":
		return 1
	case "2":
		return 2
	default:
		p.errs = append(p.errs, fmt.Errorf("probe fact cgroup_version=%q is not 1 or 2", v))
		return 0
	}
}

func (p *parser) time(k string) time.Time {
	v := p.kv[k]
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("probe fact %s=%q is not an RFC 3339 time", k, v))
	}
	return t
}
