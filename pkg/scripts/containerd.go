package scripts

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// Paths of containerd's configuration on every host.
const (
	containerdConfig = "/etc/containerd/config.toml"
	certsDir         = "/etc/containerd/certs.d"
	// managedMarker starts every hosts.toml slipway writes, so that a later run can tell its own
	// files (and remove those the manifest dropped) from the administrator's.
	managedMarker = "# Managed by slipway"
)

// registryFile is one registry's directory below certs.d, its hosts.toml and its CA file.
type registryFile struct {
	Dir, HostsTOML string
	CAPath, CA     string
}

// hostsDir is the certs.d directory for a registry name: "*" configures every registry.
func hostsDir(name string) string {
	if name == "*" {
		return "_default"
	}
	return name
}

// upstreamServer is the registry's own endpoint, which containerd tries after the mirrors.
func upstreamServer(name string) string {
	if name == "docker.io" {
		return "https://registry-1.docker.io"
	}
	return "https://" + name
}

// registries returns the manifest's registries plus, when registryConfiguration marks the
// overwrite registry insecure and the manifest does not configure it itself, an entry that
// lets containerd reach it over plain HTTP or unverified TLS.
func registries(c *v1beta1.Cluster) map[string]v1beta1.ContainerdRegistry {
	out := map[string]v1beta1.ContainerdRegistry{}
	for k, v := range c.ContainerRuntime.Containerd.Registries {
		out[k] = v
	}
	if r := c.RegistryConfiguration; r != nil && r.OverwriteRegistry != "" && r.InsecureRegistry {
		host := strings.SplitN(r.OverwriteRegistry, "/", 2)[0]
		if _, ok := out[host]; !ok {
			out[host] = v1beta1.ContainerdRegistry{
				Mirrors:   []string{"https://" + host, "http://" + host},
				TLSConfig: &v1beta1.RegistryTLSConfig{InsecureSkipVerify: true},
			}
		}
	}
	return out
}

func sortedNames(m map[string]v1beta1.ContainerdRegistry) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// registryFiles renders one hosts.toml (and CA file) per registry. Each mirror gets an explicit
// [host."<url>"] table: with only a server line, containerd 1.6 still tried HTTPS on an
// http:// mirror.
func registryFiles(regs map[string]v1beta1.ContainerdRegistry, cas map[string][]byte) ([]registryFile, error) {
	var files []registryFile
	for _, name := range sortedNames(regs) {
		r := regs[name]
		dir := hostsDir(name)
		if err := checkValue(dir); err != nil || strings.ContainsAny(dir, "/ ") || dir == "." || dir == ".." {
			return nil, fmt.Errorf("registry name %q cannot name a directory", name)
		}
		f := registryFile{Dir: dir}
		var tls strings.Builder
		if r.TLSConfig != nil && r.TLSConfig.CAFile != "" {
			pem, ok := cas[name]
			if !ok || len(pem) == 0 {
				return nil, fmt.Errorf("registry %s: the contents of tlsConfig.caFile %s were not given", name, r.TLSConfig.CAFile)
			}
			f.CAPath = certsDir + "/" + dir + "/ca.crt"
			f.CA = string(pem)
			fmt.Fprintf(&tls, "ca = %s\n", tomlString(f.CAPath))
		}
		if r.TLSConfig != nil && r.TLSConfig.InsecureSkipVerify {
			tls.WriteString("skip_verify = true\n")
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: registry %s from the cluster manifest. Changes are overwritten.\n", managedMarker, name)
		if name != "*" {
			fmt.Fprintf(&b, "server = %s\n", tomlString(upstreamServer(name)))
			// Top-level TLS settings apply to the server itself.
			b.WriteString(tls.String())
		}
		for _, m := range r.Mirrors {
			u, err := url.Parse(m)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("registry %s: mirror %q is not an http or https URL", name, m)
			}
			fmt.Fprintf(&b, "\n[host.%s]\n  capabilities = [\"pull\", \"resolve\"]\n", tomlString(m))
			for _, line := range strings.Split(strings.TrimSuffix(tls.String(), "\n"), "\n") {
				if line != "" {
					b.WriteString("  " + line + "\n")
				}
			}
		}
		f.HostsTOML = b.String()
		files = append(files, f)
	}
	return files, nil
}

// containerdConfigTOML renders /etc/containerd/config.toml (config version 2, which
// containerd 1.6 and 1.7 read). Credentials go into the CRI plugin's registry.configs auth
// tables, which containerd 1.6 still honours next to config_path (hosts.toml has no
// credentials); the file is then mode 0600. hasAuth reports that.
func containerdConfigTOML(sandboxImage string, regs map[string]v1beta1.ContainerdRegistry) (cfg string, hasAuth bool, err error) {
	const cri = criPluginV2
	var b strings.Builder
	b.WriteString("# Written by slipway from the cluster manifest. Changes are overwritten.\nversion = 2\n\n")
	fmt.Fprintf(&b, "%s]\n  sandbox_image = %s\n\n", cri, tomlString(sandboxImage))
	fmt.Fprintf(&b, "%s.containerd]\n  default_runtime_name = \"runc\"\n\n", cri)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\n", cri)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n\n", cri)
	fmt.Fprintf(&b, "%s.cni]\n  bin_dir = \"/opt/cni/bin\"\n  conf_dir = \"/etc/cni/net.d\"\n\n", cri)
	fmt.Fprintf(&b, "%s.registry]\n  config_path = %s\n", cri, tomlString(certsDir))
	hasAuth, err = writeAuth(&b, cri, regs)
	return b.String(), hasAuth, err
}

// The tables under which the two config versions hold registry credentials (opened, not closed).
const (
	criPluginV2    = `[plugins."io.containerd.grpc.v1.cri"`
	imagesPluginV3 = `[plugins."io.containerd.cri.v1.images"`
)

// writeAuth appends each registry's credentials as <plugin>.registry.configs."<host>".auth
// tables, one per host containerd may talk to, and reports whether there were any.
func writeAuth(b *strings.Builder, plugin string, regs map[string]v1beta1.ContainerdRegistry) (bool, error) {
	hasAuth := false
	for _, name := range sortedNames(regs) {
		a := regs[name].Auth
		if a == nil {
			continue
		}
		if name == "*" {
			return false, fmt.Errorf("registry \"*\": credentials need a registry name, not *")
		}
		for _, host := range authHosts(name, regs[name].Mirrors) {
			fmt.Fprintf(b, "\n%s.registry.configs.%s.auth]\n", plugin, tomlString(host))
			for _, kv := range [][2]string{{"username", a.Username}, {"password", a.Password}, {"auth", a.Auth}, {"identitytoken", a.IdentityToken}} {
				if kv[1] != "" {
					fmt.Fprintf(b, "  %s = %s\n", kv[0], tomlString(kv[1]))
				}
			}
		}
		hasAuth = true
	}
	return hasAuth, nil
}

// authHosts are the hosts containerd looks credentials up by: the host it is talking to, so
// the registry itself (Docker Hub's real endpoint for docker.io) and each mirror.
func authHosts(name string, mirrors []string) []string {
	hosts := []string{name}
	if name == "docker.io" {
		hosts = append(hosts, "registry-1.docker.io")
	}
	for _, m := range mirrors {
		if u, err := url.Parse(m); err == nil && u.Host != "" && u.Host != name {
			hosts = append(hosts, u.Host)
		}
	}
	return hosts
}

// containerdUnit is the systemd unit of a containerd that slipway installed from a release
// (in /usr/local/bin). KillMode=process keeps the shims, and so the containers, running when
// containerd restarts.
const containerdUnit = `# Written by slipway: containerd installed from its release into /usr/local/bin.
[Unit]
Description=containerd container runtime
Documentation=https://containerd.io
After=network.target local-fs.target

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/local/bin/containerd
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
`

// containerdInstall is what the prerequisites script needs to install containerd where the
// host has none new enough.
type containerdInstall struct {
	// Version is installed; Minimum is the oldest kept (both like 2.2.9).
	Version, Minimum string
	// Releases is the base URL of containerd's release tarballs; CurlProto limits curl to https
	// unless the manifest allowed http.
	Releases, CurlProto string
	// Unit is the systemd unit written for the installed release.
	Unit string
	// Upload, when the manifest's assets are uploaded, is the directory on the host where apply
	// has put the release tarball (ContainerdTarball) and, if the operator has it, its
	// .sha256sum; nothing is downloaded then.
	Upload string
}

// ContainerdUploadDir is where apply uploads containerd's release tarball for the upload asset
// source, before running the prerequisites on a host whose containerd is too old.
func ContainerdUploadDir(version string) string {
	return UploadDir("containerd-" + strings.TrimPrefix(version, "v"))
}

// ContainerdUpload is the containerd release that apply uploads to a host when the manifest's
// assets are uploaded: its version and tarball. Needed is false where the host keeps its own
// containerd (or, on Flatcar, where the prerequisites refuse instead).
type ContainerdUpload struct {
	Version, Tarball string
	Needed           bool
}

// ContainerdUploadFor says whether the host with facts f needs containerd's release uploaded
// for the cluster c, whose assets are uploaded.
func ContainerdUploadFor(c *v1beta1.Cluster, f Facts) (ContainerdUpload, error) {
	policy, err := containerdPolicy(c)
	if err != nil {
		return ContainerdUpload{}, err
	}
	if fam, err := FamilyOf(f.OS); err != nil || fam == Flatcar || !policy.Replaces(f.ContainerdVersion) {
		return ContainerdUpload{Version: policy.Version}, nil
	}
	arch, err := f.GoArch()
	if err != nil {
		return ContainerdUpload{}, err
	}
	return ContainerdUpload{Version: policy.Version, Tarball: ContainerdTarball(policy.Version, arch), Needed: true}, nil
}

// ContainerdTarball is the file name of containerd's release for version (2.2.9) and a
// Kubernetes architecture (amd64, arm64), as containerd publishes it.
func ContainerdTarball(version, arch string) string {
	return fmt.Sprintf("containerd-%s-linux-%s.tar.gz", strings.TrimPrefix(version, "v"), arch)
}

// containerdPolicy is the containerd policy of the cluster's Kubernetes version.
func containerdPolicy(c *v1beta1.Cluster) (kubeversion.Containerd, error) {
	v, err := v1beta1.ParseKubernetesVersion(c.Versions.Kubernetes)
	if err != nil {
		return kubeversion.Containerd{}, fmt.Errorf("versions.kubernetes: %w", err)
	}
	return kubeversion.ContainerdFor(v.Minor())
}

func containerdInstallFor(c *v1beta1.Cluster) (containerdInstall, error) {
	policy, err := containerdPolicy(c)
	if err != nil {
		return containerdInstall{}, err
	}
	rel := c.ContainerRuntime.Containerd.Release
	base := strings.TrimSuffix(rel.BaseURL, "/")
	if base == "" {
		base = v1beta1.DefaultContainerdReleaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && rel.Insecure)) {
		return containerdInstall{}, fmt.Errorf("containerRuntime.containerd.release.baseURL %q must be an https URL (or http with insecure: true)", v1beta1.RedactURL(base))
	}
	if err := checkValue(base); err != nil {
		return containerdInstall{}, fmt.Errorf("containerRuntime.containerd.release.baseURL: %w", err)
	}
	in := containerdInstall{Version: policy.Version, Minimum: policy.Minimum, Releases: base, CurlProto: "=https", Unit: containerdUnit}
	if rel.Insecure {
		in.CurlProto = "=http,https"
	}
	if c.Assets.Upload != nil {
		in.Upload = ContainerdUploadDir(policy.Version)
	}
	return in, nil
}

// containerdConfigV3 renders /etc/containerd/config.toml for containerd 2 (config version 3,
// where the CRI plugin is split into images and runtime): the same settings as
// containerdConfigTOML. Credentials stay in the images plugin's registry.configs auth tables,
// which containerd 2 still reads (deprecated upstream in favour of credential plugins).
func containerdConfigV3(sandboxImage string, regs map[string]v1beta1.ContainerdRegistry) (cfg string, hasAuth bool, err error) {
	const images, runtime = imagesPluginV3, `[plugins."io.containerd.cri.v1.runtime"`
	var b strings.Builder
	b.WriteString("# Written by slipway from the cluster manifest. Changes are overwritten.\nversion = 3\n\n")
	fmt.Fprintf(&b, "%s.pinned_images]\n  sandbox = %s\n\n", images, tomlString(sandboxImage))
	fmt.Fprintf(&b, "%s.containerd]\n  default_runtime_name = \"runc\"\n\n", runtime)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\n", runtime)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n\n", runtime)
	fmt.Fprintf(&b, "%s.cni]\n  bin_dirs = [\"/opt/cni/bin\"]\n  conf_dir = \"/etc/cni/net.d\"\n\n", runtime)
	fmt.Fprintf(&b, "%s.registry]\n  config_path = %s\n", images, tomlString(certsDir))
	hasAuth, err = writeAuth(&b, images, regs)
	return b.String(), hasAuth, err
}
