package access

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// Servers lists, as host:port, where the cluster's API answers: the endpoint, under its host
// and each alternative name on its port, and every control plane's own API server on the port
// kubeadm binds. A kubeconfig from a host may point at these only, and the API proxy opens
// tunnels to these only.
func Servers(endpoint v1beta1.APIEndpoint, nodes []*inventory.Node) []string {
	port := endpoint.Port
	if port == 0 {
		port = v1beta1.DefaultAPIPort
	}
	var out []string
	for _, h := range append([]string{endpoint.Host}, endpoint.AlternativeNames...) {
		if h != "" {
			out = append(out, net.JoinHostPort(h, strconv.Itoa(port)))
		}
	}
	for _, n := range nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		for _, a := range []string{n.Host.PrivateAddress, n.Host.PublicAddress} {
			if a != "" {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(kubeadm.APIServerBindPort)))
			}
		}
	}
	return out
}

// kept are the kubeconfig fields, by their YAML names, that a kubeconfig read from a host
// contributes: the server, the CA and the credentials, all inline. ignored are harmless data
// dropped on the way. Every other field is refused: it runs something on this machine, reads a
// file of this machine, or steers where the connection goes or whom it acts as.
var (
	kept    = map[string]bool{"server": true, "certificate-authority-data": true, "client-certificate-data": true, "client-key-data": true, "token": true, "cluster": true, "user": true}
	ignored = map[string]bool{"extensions": true, "disable-compression": true, "namespace": true}
	refused = map[string]string{
		"exec":                     "runs a command on this machine",
		"auth-provider":            "runs a credential plugin on this machine",
		"certificate-authority":    "reads a file of this machine; a kubeconfig from a host carries certificate-authority-data inline",
		"client-certificate":       "reads a file of this machine; a kubeconfig from a host carries client-certificate-data inline",
		"client-key":               "reads a file of this machine; a kubeconfig from a host carries client-key-data inline",
		"tokenFile":                "reads a file of this machine and sends it as a token; a kubeconfig from a host carries token inline",
		"proxy-url":                "sends the connection through a proxy the host chose",
		"tls-server-name":          "changes which name the API server's certificate is checked against",
		"insecure-skip-tls-verify": "turns off the check of the API server's certificate",
		"act-as":                   "makes the requests act as another identity",
		"act-as-uid":               "makes the requests act as another identity",
		"act-as-groups":            "makes the requests act as another identity",
		"act-as-user-extra":        "makes the requests act as another identity",
		"username":                 "is basic authentication, which Kubernetes does not serve",
		"password":                 "is basic authentication, which Kubernetes does not serve",
	}
)

// Vet reads a kubeconfig that host holds at path and returns one rebuilt from its current
// context's server, CA and credentials alone. A kubeconfig on a host is data: it is refused,
// naming the host and what was refused, when any user runs a command or plugin (exec,
// auth-provider), when the current context reads files of this machine, steers the connection
// (proxy, TLS checks, impersonation) or points at a server that is not one of servers (host:port,
// see Servers), and when it lacks a CA or credentials.
func Vet(data []byte, host, path string, servers []string) ([]byte, error) {
	in, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s is not a kubeconfig: %w", host, path, err)
	}
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("%s: refusing %s: %s", host, path, fmt.Sprintf(format, a...))
	}
	for name, u := range in.AuthInfos {
		if u.Exec != nil {
			return nil, refuse("user %q has exec (command %q), which %s", name, u.Exec.Command, refused["exec"])
		}
		if u.AuthProvider != nil {
			return nil, refuse("user %q has auth-provider %q, which %s", name, u.AuthProvider.Name, refused["auth-provider"])
		}
	}
	ctx := in.Contexts[in.CurrentContext]
	if ctx == nil {
		return nil, refuse("current-context %q names no context", in.CurrentContext)
	}
	c, u := in.Clusters[ctx.Cluster], in.AuthInfos[ctx.AuthInfo]
	if c == nil || u == nil {
		return nil, refuse("context %q names cluster %q and user %q, and not both exist", in.CurrentContext, ctx.Cluster, ctx.AuthInfo)
	}
	for _, e := range []struct {
		what string
		v    any
	}{{fmt.Sprintf("context %q", in.CurrentContext), ctx}, {fmt.Sprintf("cluster %q", ctx.Cluster), c}, {fmt.Sprintf("user %q", ctx.AuthInfo), u}} {
		if f := steering(e.v); f != "" {
			why := refused[f]
			if why == "" {
				why = "is not a field slipway takes from a kubeconfig on a host"
			}
			return nil, refuse("%s has %s, which %s", e.what, f, why)
		}
	}
	if err := vetServer(c.Server, servers); err != nil {
		return nil, refuse("cluster %q: %v", ctx.Cluster, err)
	}
	if err := vetCA(c.CertificateAuthorityData); err != nil {
		return nil, refuse("cluster %q: %v", ctx.Cluster, err)
	}
	if err := vetCredentials(u); err != nil {
		return nil, refuse("user %q: %v", ctx.AuthInfo, err)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[ctx.Cluster] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.CertificateAuthorityData}
	out.AuthInfos[ctx.AuthInfo] = &clientcmdapi.AuthInfo{ClientCertificateData: u.ClientCertificateData, ClientKeyData: u.ClientKeyData, Token: u.Token}
	out.Contexts[in.CurrentContext] = &clientcmdapi.Context{Cluster: ctx.Cluster, AuthInfo: ctx.AuthInfo}
	out.CurrentContext = in.CurrentContext
	return clientcmd.Write(*out)
}

// steering returns the YAML name of the first field of a kubeconfig cluster, user or context
// (a pointer to the struct) that is set and neither kept nor ignored; "" when there is none. It
// walks the struct, so that a field client-go adds later is refused until it is judged.
func steering(v any) string {
	s := reflect.ValueOf(v).Elem()
	for i := range s.NumField() {
		name, _, _ := strings.Cut(s.Type().Field(i).Tag.Get("json"), ",")
		if name == "-" || kept[name] || ignored[name] || s.Field(i).IsZero() {
			continue
		}
		return name
	}
	return ""
}

// vetServer checks that server is an https URL of one of servers (host:port), with nothing
// else (no user, path or query) in it.
func vetServer(server string, servers []string) error {
	u, err := url.Parse(server)
	if err != nil {
		return fmt.Errorf("server %q is not a URL", server)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return fmt.Errorf("server %q: want https://host:port and nothing more", server)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	got := canonical(u.Hostname(), port)
	for _, s := range servers {
		if h, p, err := net.SplitHostPort(s); err == nil && canonical(h, p) == got {
			return nil
		}
	}
	return fmt.Errorf("server %q is not the cluster's API, which is at %s (the manifest's apiEndpoint, its alternativeNames and the control planes' addresses); add the name to apiEndpoint.alternativeNames if it is the cluster's", server, strings.Join(servers, ", "))
}

// canonical is host:port with an IP address in its usual form and a DNS name in lower case
// without its final dot, so that equal addresses compare equal.
func canonical(host, port string) string {
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else {
		host = strings.ToLower(strings.TrimSuffix(host, "."))
	}
	return net.JoinHostPort(host, port)
}

func vetCA(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("no certificate-authority-data: the API server's certificate could not be checked against the cluster's CA")
	}
	n := 0
	for rest := data; ; n++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("certificate-authority-data holds a %q PEM block, not only certificates", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate-authority-data: %w", err)
		}
	}
	if n == 0 {
		return fmt.Errorf("certificate-authority-data holds no PEM certificate")
	}
	return nil
}

func vetCredentials(u *clientcmdapi.AuthInfo) error {
	cert, key := len(u.ClientCertificateData) > 0, len(u.ClientKeyData) > 0
	switch {
	case cert != key:
		return fmt.Errorf("client-certificate-data and client-key-data come together, and only one is set")
	case cert:
		if _, err := tls.X509KeyPair(u.ClientCertificateData, u.ClientKeyData); err != nil {
			return fmt.Errorf("client-certificate-data and client-key-data: %w", err)
		}
	case u.Token == "":
		return fmt.Errorf("no credentials: want client-certificate-data and client-key-data, or token")
	}
	for _, r := range u.Token {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("token holds a space or control character")
		}
	}
	return nil
}
