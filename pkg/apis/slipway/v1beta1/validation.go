package v1beta1

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a defaulted Cluster. It returns every error at once, each naming its field
// path, and warnings that do not stop slipway (such as an even number of control-plane hosts).
func Validate(c *Cluster) (errs field.ErrorList, warnings []string) {
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{Kind}))
	}
	errs = append(errs, validateDNSLabel(c.Name, field.NewPath("name"))...)
	if _, err := ParseKubernetesVersion(c.Versions.Kubernetes); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("versions", "kubernetes"), c.Versions.Kubernetes, err.Error()))
	}

	cp := field.NewPath("controlPlane", "hosts")
	if len(c.ControlPlane.Hosts) == 0 {
		errs = append(errs, field.Required(cp, "at least one control-plane host is needed (in the manifest or the Terraform output slipway_hosts.control_plane)"))
	}
	if n := len(c.ControlPlane.Hosts); n > 0 && n%2 == 0 {
		warnings = append(warnings, fmt.Sprintf("controlPlane.hosts: %d hosts is an even number; etcd tolerates no more failures with %d than with %d, use an odd number", n, n, n-1))
	}
	leaders := 0
	for i, h := range c.ControlPlane.Hosts {
		errs = append(errs, validateHost(&h, cp.Index(i))...)
		if h.IsLeader {
			leaders++
			if leaders > 1 {
				errs = append(errs, field.Invalid(cp.Index(i).Child("isLeader"), true, "only one control-plane host may be the leader"))
			}
		}
	}
	sw := field.NewPath("staticWorkers", "hosts")
	for i, h := range c.StaticWorkers.Hosts {
		errs = append(errs, validateHost(&h, sw.Index(i))...)
		if h.IsLeader {
			errs = append(errs, field.Forbidden(sw.Index(i).Child("isLeader"), "only control-plane hosts can be the leader"))
		}
	}
	errs = append(errs, validateKubelet(&c.Kubelet, field.NewPath("kubelet"))...)
	errs = append(errs, validateDownloadURL(c.ContainerRuntime.Containerd.Release.BaseURL, c.ContainerRuntime.Containerd.Release.Insecure,
		field.NewPath("containerRuntime", "containerd", "release"))...)
	errs = append(errs, validateUniqueHosts(c)...)
	errs = append(errs, validateEndpoint(c)...)
	errs = append(errs, validateNetwork(c)...)
	errs = append(errs, validateCloud(c)...)
	errs = append(errs, validateRuntime(c)...)
	errs = append(errs, validateAssets(c)...)
	errs = append(errs, validateProxy(&c.Proxy, field.NewPath("proxy"))...)
	errs = append(errs, validateWorkers(c)...)
	if s := c.Etcd.Snapshots; s != nil {
		p := field.NewPath("etcd", "snapshots")
		if _, err := OnCalendar(s.Schedule); err != nil {
			errs = append(errs, field.Invalid(p.Child("schedule"), s.Schedule, err.Error()))
		}
		if s.Retain < 1 || s.Retain > MaxSnapshotRetain {
			errs = append(errs, field.Invalid(p.Child("retain"), s.Retain, fmt.Sprintf("keep between 1 and %d snapshots", MaxSnapshotRetain)))
		}
		if s.S3 != nil {
			errs = append(errs, validateSnapshotS3(s.S3, p.Child("s3"))...)
		}
	}
	if c.Addons != nil && c.Addons.Path == "" {
		errs = append(errs, field.Required(field.NewPath("addons", "path"), "the directory of addon manifests"))
	}
	return errs, warnings
}

func validateHost(h *Host, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.PublicAddress == "" {
		errs = append(errs, field.Required(p.Child("publicAddress"), "the address slipway connects to"))
	} else {
		errs = append(errs, validateAddress(h.PublicAddress, p.Child("publicAddress"))...)
	}
	if h.PrivateAddress != "" {
		errs = append(errs, validateAddress(h.PrivateAddress, p.Child("privateAddress"))...)
	}
	if h.Hostname != "" {
		errs = append(errs, validateDNSSubdomain(h.Hostname, p.Child("hostname"))...)
	}
	errs = append(errs, validateUser(h.SSHUsername, p.Child("sshUsername"))...)
	errs = append(errs, validatePort(h.SSHPort, p.Child("sshPort"))...)
	errs = append(errs, validateSSHAuth(h, p)...)
	if h.SSHHostPublicKey != "" {
		errs = append(errs, validatePublicKey(h.SSHHostPublicKey, p.Child("sshHostPublicKey"))...)
	}
	depth := 0
	bp := p.Child("bastion")
	for b := h.Bastion; b != nil; b, bp = b.Bastion, bp.Child("bastion") {
		if depth++; depth > 5 {
			errs = append(errs, field.TooMany(bp, depth, 5))
			break
		}
		if b.Address == "" {
			errs = append(errs, field.Required(bp.Child("address"), ""))
		} else {
			errs = append(errs, validateAddress(b.Address, bp.Child("address"))...)
		}
		errs = append(errs, validatePort(b.Port, bp.Child("port"))...)
		errs = append(errs, validateUser(b.User, bp.Child("user"))...)
		if b.HostPublicKey != "" {
			errs = append(errs, validatePublicKey(b.HostPublicKey, bp.Child("hostPublicKey"))...)
		}
	}
	errs = append(errs, validateLabels(h.Labels, p.Child("labels"))...)
	errs = append(errs, validateAnnotations(h.Annotations, p.Child("annotations"))...)
	errs = append(errs, validateTaints(h.Taints, p.Child("taints"))...)
	errs = append(errs, validateKubelet(&h.Kubelet, p.Child("kubelet"))...)
	if h.Kubelet.AllowCgroupV1 {
		errs = append(errs, field.Forbidden(p.Child("kubelet", "allowCgroupV1"), "set it cluster-wide, as kubelet.allowCgroupV1: every kubelet shares kubeadm's configuration"))
	}
	return errs
}

// validateSSHAuth requires a way to log in: a key file, or an agent socket that resolves.
func validateSSHAuth(h *Host, p *field.Path) field.ErrorList {
	sock, err := ResolveAgentSocket(h.SSHAgentSocket)
	if err != nil {
		// The value is the name of a variable, never its value (which may be anything).
		return field.ErrorList{field.Invalid(p.Child("sshAgentSocket"), h.SSHAgentSocket, err.Error())}
	}
	if h.SSHPrivateKeyFile != "" {
		if strings.ContainsAny(h.SSHPrivateKeyFile, "\x00\n") {
			return field.ErrorList{field.Invalid(p.Child("sshPrivateKeyFile"), h.SSHPrivateKeyFile, "must be a file path")}
		}
		return nil
	}
	if sock == "" {
		return field.ErrorList{field.Required(p.Child("sshPrivateKeyFile"),
			fmt.Sprintf("no SSH authentication: set sshPrivateKeyFile, or sshAgentSocket (%q resolves to nothing)", h.SSHAgentSocket))}
	}
	return nil
}

// ResolveAgentSocket turns an sshAgentSocket value (a path or env:NAME) into a path; "" means
// none. env:NAME may name any variable, so unless the variable holds the path of an existing
// Unix socket its value is refused without being shown: an error message must not print a
// secret that a typo pointed at. SSH_AUTH_SOCK, the default, is the agent's own variable and
// resolves as it is.
func ResolveAgentSocket(s string) (string, error) {
	name, ok := strings.CutPrefix(s, "env:")
	if !ok {
		return s, nil
	}
	v := os.Getenv(name)
	if v == "" || s == DefaultSSHAgentSocket {
		return v, nil
	}
	if fi, err := os.Stat(v); !filepath.IsAbs(v) || err != nil || fi.Mode()&os.ModeSocket == 0 {
		return "", fmt.Errorf("the variable %s does not hold the path of an existing Unix socket (its value is not shown)", name)
	}
	return v, nil
}

func validateUniqueHosts(c *Cluster) field.ErrorList {
	var errs field.ErrorList
	addrs := map[string]string{}
	names := map[string]string{}
	check := func(hosts []Host, p *field.Path) {
		for i, h := range hosts {
			hp := p.Index(i)
			for _, a := range []struct{ v, f string }{{h.PublicAddress, "publicAddress"}, {h.PrivateAddress, "privateAddress"}} {
				if a.v == "" || (a.f == "privateAddress" && a.v == h.PublicAddress) {
					continue
				}
				key := a.v + "|" + fmt.Sprint(h.SSHPort)
				if a.f == "privateAddress" {
					key = a.v
				}
				if prev, dup := addrs[key]; dup {
					errs = append(errs, field.Duplicate(hp.Child(a.f), fmt.Sprintf("%s (already used by %s)", a.v, prev)))
				} else {
					addrs[key] = hp.Child(a.f).String()
				}
			}
			if h.Hostname != "" {
				if prev, dup := names[h.Hostname]; dup {
					errs = append(errs, field.Duplicate(hp.Child("hostname"), fmt.Sprintf("%s (already used by %s)", h.Hostname, prev)))
				} else {
					names[h.Hostname] = hp.Child("hostname").String()
				}
			}
		}
	}
	check(c.ControlPlane.Hosts, field.NewPath("controlPlane", "hosts"))
	check(c.StaticWorkers.Hosts, field.NewPath("staticWorkers", "hosts"))
	return errs
}

func validateEndpoint(c *Cluster) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("apiEndpoint")
	if c.APIEndpoint.Host == "" {
		if len(c.ControlPlane.Hosts) > 1 {
			errs = append(errs, field.Required(p.Child("host"), "a load balancer address is needed for more than one control-plane host (set it here or in the Terraform output slipway_api.endpoint)"))
		}
	} else {
		errs = append(errs, validateAddress(c.APIEndpoint.Host, p.Child("host"))...)
	}
	errs = append(errs, validatePort(c.APIEndpoint.Port, p.Child("port"))...)
	for i, n := range c.APIEndpoint.AlternativeNames {
		errs = append(errs, validateAddress(n, p.Child("alternativeNames").Index(i))...)
	}
	return errs
}

func validateNetwork(c *Cluster) field.ErrorList {
	var errs field.ErrorList
	n := &c.ClusterNetwork
	p := field.NewPath("clusterNetwork")
	pods, e1 := parseCIDR(n.PodSubnet, p.Child("podSubnet"))
	svcs, e2 := parseCIDR(n.ServiceSubnet, p.Child("serviceSubnet"))
	errs = append(errs, e1...)
	errs = append(errs, e2...)
	if pods.IsValid() && svcs.IsValid() && pods.Overlaps(svcs) {
		errs = append(errs, field.Invalid(p.Child("serviceSubnet"), n.ServiceSubnet, fmt.Sprintf("overlaps podSubnet %s", n.PodSubnet)))
	}
	hostCheck := func(hosts []Host, hp *field.Path) {
		for i, h := range hosts {
			for _, a := range []struct{ v, f string }{{h.PublicAddress, "publicAddress"}, {h.PrivateAddress, "privateAddress"}} {
				ip, err := netip.ParseAddr(a.v)
				if err != nil {
					continue
				}
				for _, s := range []struct {
					pfx  netip.Prefix
					name string
				}{{pods, "podSubnet"}, {svcs, "serviceSubnet"}} {
					if s.pfx.IsValid() && s.pfx.Contains(ip) {
						errs = append(errs, field.Invalid(hp.Index(i).Child(a.f), a.v, fmt.Sprintf("lies inside clusterNetwork.%s %s; host and cluster networks must not overlap", s.name, s.pfx)))
					}
				}
			}
		}
	}
	hostCheck(c.ControlPlane.Hosts, field.NewPath("controlPlane", "hosts"))
	hostCheck(c.StaticWorkers.Hosts, field.NewPath("staticWorkers", "hosts"))
	errs = append(errs, validateDNSSubdomain(n.ServiceDomainName, p.Child("serviceDomainName"))...)
	errs = append(errs, validatePortRange(n.NodePortRange, p.Child("nodePortRange"))...)

	cni := p.Child("cni")
	set := 0
	for _, on := range []bool{n.CNI.Flannel != nil, n.CNI.Canal != nil, n.CNI.Cilium != nil, n.CNI.External != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		errs = append(errs, field.Invalid(cni, fmt.Sprintf("%d plugins", set), "set exactly one of flannel, canal, cilium or external"))
	}
	if f := n.CNI.Flannel; f != nil && f.Backend != "vxlan" && f.Backend != "host-gw" {
		errs = append(errs, field.NotSupported(cni.Child("flannel", "backend"), f.Backend, []string{"vxlan", "host-gw"}))
	}
	if cn := n.CNI.Canal; cn != nil && (cn.MTU < 576 || cn.MTU > 9000) {
		errs = append(errs, field.Invalid(cni.Child("canal", "mtu"), cn.MTU, "must be between 576 and 9000"))
	}
	for i, ip := range n.UpstreamDNS {
		if a, err := netip.ParseAddr(ip); err != nil || a.IsLoopback() {
			errs = append(errs, field.Invalid(p.Child("upstreamDNS").Index(i), ip, "must be a non-loopback IP address"))
		}
	}
	if m := n.KubeProxy.ConntrackMaxPerCore; m != nil && *m < 0 {
		errs = append(errs, field.Invalid(p.Child("kubeProxy", "conntrackMaxPerCore"), *m, "must not be negative"))
	}
	if m := n.KubeProxy.Mode; m != "iptables" && m != "ipvs" {
		errs = append(errs, field.NotSupported(p.Child("kubeProxy", "mode"), m, []string{"iptables", "ipvs"}))
	}
	return errs
}

func parseCIDR(s string, p *field.Path) (netip.Prefix, field.ErrorList) {
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, field.ErrorList{field.Invalid(p, s, "must be a CIDR such as 10.244.0.0/16")}
	}
	if pfx.Masked() != pfx {
		return netip.Prefix{}, field.ErrorList{field.Invalid(p, s, fmt.Sprintf("has host bits set; did you mean %s?", pfx.Masked()))}
	}
	return pfx, nil
}

func validatePortRange(s string, p *field.Path) field.ErrorList {
	var lo, hi int
	if _, err := fmt.Sscanf(s, "%d-%d", &lo, &hi); err != nil || fmt.Sprintf("%d-%d", lo, hi) != s || lo < 1 || hi > 65535 || lo > hi {
		return field.ErrorList{field.Invalid(p, s, "must be a port range such as 30000-32767")}
	}
	return nil
}

func validatePort(port int, p *field.Path) field.ErrorList {
	if port < 1 || port > 65535 {
		return field.ErrorList{field.Invalid(p, port, "must be a port number from 1 to 65535")}
	}
	return nil
}

// validateAddress accepts an IP address or a DNS name; nothing else can reach a shell or a
// config file through it.
func validateAddress(s string, p *field.Path) field.ErrorList {
	if net.ParseIP(s) != nil {
		return nil
	}
	if errs := validateDNSSubdomain(s, p); len(errs) > 0 {
		return field.ErrorList{field.Invalid(p, s, "must be an IP address or a DNS name")}
	}
	return nil
}
