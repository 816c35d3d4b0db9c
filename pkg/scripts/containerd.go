package scripts

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
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
	const cri = `[plugins."io.containerd.grpc.v1.cri"`
	var b strings.Builder
	b.WriteString("# Written by slipway from the cluster manifest. Changes are overwritten.\nversion = 2\n\n")
	fmt.Fprintf(&b, "%s]\n  sandbox_image = %s\n\n", cri, tomlString(sandboxImage))
	fmt.Fprintf(&b, "%s.containerd]\n  default_runtime_name = \"runc\"\n\n", cri)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\n", cri)
	fmt.Fprintf(&b, "%s.containerd.runtimes.runc.options]\n  SystemdCgroup = true\n\n", cri)
	fmt.Fprintf(&b, "%s.cni]\n  bin_dir = \"/opt/cni/bin\"\n  conf_dir = \"/etc/cni/net.d\"\n\n", cri)
	fmt.Fprintf(&b, "%s.registry]\n  config_path = %s\n", cri, tomlString(certsDir))
	for _, name := range sortedNames(regs) {
		a := regs[name].Auth
		if a == nil {
			continue
		}
		if name == "*" {
			return "", false, fmt.Errorf("registry \"*\": credentials need a registry name, not *")
		}
		for _, host := range authHosts(name, regs[name].Mirrors) {
			fmt.Fprintf(&b, "\n%s.registry.configs.%s.auth]\n", cri, tomlString(host))
			for _, kv := range [][2]string{{"username", a.Username}, {"password", a.Password}, {"auth", a.Auth}, {"identitytoken", a.IdentityToken}} {
				if kv[1] != "" {
					fmt.Fprintf(&b, "  %s = %s\n", kv[0], tomlString(kv[1]))
				}
			}
		}
		hasAuth = true
	}
	return b.String(), hasAuth, nil
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
