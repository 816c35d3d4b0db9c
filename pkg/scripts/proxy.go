package scripts

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// proxyEnv is the proxy as environment variables, empty when the manifest sets none. With
// From, the script reads them from that file on the host (NodeCredentials' CredentialsProxy)
// and carries none.
type proxyEnv struct {
	HTTP, HTTPS, NoProxy string
	From                 string
}

func (p proxyEnv) set() bool { return p.HTTP != "" || p.HTTPS != "" }

// from is the proxy read from dir's CredentialsProxy file instead of carried, when one is set.
func (p proxyEnv) from(dir string) (proxyEnv, error) {
	if !p.set() {
		return proxyEnv{}, nil
	}
	f, err := credentialsFile(dir, CredentialsProxy)
	if err != nil {
		return proxyEnv{}, err
	}
	return proxyEnv{From: f}, nil
}

// proxyFor builds the proxy environment: NO_PROXY gets, besides the manifest's list, everything
// that must never go through the proxy: loopback, the pod and service networks, the cluster
// domain, the API endpoint and every host's addresses.
func proxyFor(c *v1beta1.Cluster) (proxyEnv, error) {
	p := c.Proxy
	if p.HTTP == "" && p.HTTPS == "" {
		return proxyEnv{}, nil
	}
	var list []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	for _, s := range strings.Split(p.NoProxy, ",") {
		add(s)
	}
	for _, s := range []string{"localhost", "127.0.0.1", "::1", c.ClusterNetwork.PodSubnet, c.ClusterNetwork.ServiceSubnet,
		".svc", "." + c.ClusterNetwork.ServiceDomainName, c.APIEndpoint.Host} {
		add(s)
	}
	for _, hosts := range [][]v1beta1.Host{c.ControlPlane.Hosts, c.StaticWorkers.Hosts} {
		for _, h := range hosts {
			add(h.PrivateAddress)
			add(h.PublicAddress)
		}
	}
	env := proxyEnv{HTTP: p.HTTP, HTTPS: p.HTTPS, NoProxy: strings.Join(list, ",")}
	for _, v := range []string{env.HTTP, env.HTTPS, env.NoProxy} {
		// The values go into a systemd environment file as well as shell words.
		if err := checkValue(v); err != nil || strings.ContainsAny(v, "\"\\ ") {
			return proxyEnv{}, fmt.Errorf("proxy setting %q may not contain quotes, backslashes, spaces or line breaks", v1beta1.RedactURL(v))
		}
	}
	return env, nil
}

// containerdProxyEnv is the environment file holding the proxy for containerd. Proxy URLs may
// carry credentials, so they live in this root-only file: a drop-in's Environment= lines are
// world-readable, and every user can read them back with systemctl show.
const containerdProxyEnv = "/etc/systemd/system/containerd.service.d/http-proxy.env"

// systemdDropIn renders the unit drop-in that points the service at its proxy environment file.
func (p proxyEnv) systemdDropIn(envFile string) string {
	return "# Written by slipway from the proxy in the cluster manifest. Changes are overwritten.\n" +
		"# The values, credentials perhaps, are in the root-only file below.\n[Service]\nEnvironmentFile=" + envFile + "\n"
}

// environmentFile renders the proxy as a systemd environment file (KEY=value lines, no
// specifiers expanded).
func (p proxyEnv) environmentFile() string {
	var b strings.Builder
	b.WriteString("# Written by slipway from the proxy in the cluster manifest. Changes are overwritten.\n")
	for _, kv := range [][2]string{{"HTTP_PROXY", p.HTTP}, {"HTTPS_PROXY", p.HTTPS}, {"NO_PROXY", p.NoProxy}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
		}
	}
	return b.String()
}
