package access

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestServers(t *testing.T) {
	got := strings.Join(Servers(endpoint, nodes()), " ")
	want := "10.0.0.10:6443 api.example.com:6443 192.168.0.1:6443 10.0.0.1:6443 [fd00::2]:6443 10.0.0.2:6443"
	if got != want {
		t.Errorf("got %s, want %s (the workers' addresses are not the API)", got, want)
	}
}

// TestVetRefusesWhatSteers: every field of a kubeconfig on a host that would run something on
// this machine, read one of its files, steer the connection or the identity, or point at
// another server is refused, naming the host and the field.
func TestVetRefusesWhatSteers(t *testing.T) {
	cluster := func(c *clientcmdapi.Config) *clientcmdapi.Cluster { return c.Clusters["c"] }
	user := func(c *clientcmdapi.Config) *clientcmdapi.AuthInfo { return c.AuthInfos["kubernetes-admin"] }
	for _, tc := range []struct {
		name   string
		change func(c *clientcmdapi.Config)
		want   string
	}{
		{"exec plugin", func(c *clientcmdapi.Config) {
			user(c).Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", Args: []string{"-c", "touch /tmp/pwned"}, APIVersion: "client.authentication.k8s.io/v1"}
		}, `user "kubernetes-admin" has exec (command "/bin/sh"), which runs a command on this machine`},
		{"exec plugin on a user no context uses", func(c *clientcmdapi.Config) {
			c.AuthInfos["spare"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "id", APIVersion: "client.authentication.k8s.io/v1"}}
		}, `user "spare" has exec (command "id")`},
		{"exec command with control characters is quoted", func(c *clientcmdapi.Config) {
			user(c).Exec = &clientcmdapi.ExecConfig{Command: "x\x1b[2Jy", APIVersion: "client.authentication.k8s.io/v1"}
		}, `(command "x\x1b[2Jy")`},
		{"auth-provider", func(c *clientcmdapi.Config) {
			user(c).AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"idp-issuer-url": "https://attacker.example"}}
		}, `user "kubernetes-admin" has auth-provider "oidc", which runs a credential plugin on this machine`},
		{"foreign server", func(c *clientcmdapi.Config) { cluster(c).Server = "https://attacker.example:6443" },
			`cluster "c": server "https://attacker.example:6443" is not the cluster's API, which is at 10.0.0.10:6443, api.example.com:6443, 192.168.0.1:6443`},
		{"a control plane's kubelet port", func(c *clientcmdapi.Config) { cluster(c).Server = "https://192.168.0.1:10250" },
			`server "https://192.168.0.1:10250" is not the cluster's API`},
		{"a worker's address", func(c *clientcmdapi.Config) { cluster(c).Server = "https://192.168.0.3:6443" },
			`server "https://192.168.0.3:6443" is not the cluster's API`},
		{"the endpoint on the default port", func(c *clientcmdapi.Config) { cluster(c).Server = "https://10.0.0.10" },
			`server "https://10.0.0.10" is not the cluster's API`},
		{"plain http", func(c *clientcmdapi.Config) { cluster(c).Server = "http://10.0.0.10:6443" },
			`server "http://10.0.0.10:6443": want https://host:port and nothing more`},
		{"a path that proxies to a service", func(c *clientcmdapi.Config) {
			cluster(c).Server = "https://10.0.0.10:6443/api/v1/namespaces/x/services/y:80/proxy"
		}, `want https://host:port and nothing more`},
		{"user info in the server", func(c *clientcmdapi.Config) { cluster(c).Server = "https://me@10.0.0.10:6443" },
			`want https://host:port and nothing more`},
		{"CA file path", func(c *clientcmdapi.Config) {
			cluster(c).CertificateAuthorityData, cluster(c).CertificateAuthority = nil, "/etc/ssl/private/ca.pem"
		},
			`cluster "c" has certificate-authority, which reads a file of this machine`},
		{"CA file URL", func(c *clientcmdapi.Config) { cluster(c).CertificateAuthority = "file:///home/user/.ssh/id_rsa" },
			`cluster "c" has certificate-authority, which reads a file of this machine`},
		{"client key path", func(c *clientcmdapi.Config) { user(c).ClientKeyData, user(c).ClientKey = nil, "/home/user/.ssh/id_rsa" },
			`user "kubernetes-admin" has client-key, which reads a file of this machine`},
		{"client certificate path", func(c *clientcmdapi.Config) { user(c).ClientCertificate = "/home/user/.ssh/id_rsa.pub" },
			`user "kubernetes-admin" has client-certificate, which reads a file of this machine`},
		{"tokenFile", func(c *clientcmdapi.Config) { user(c).TokenFile = "/home/user/.aws/credentials" },
			`user "kubernetes-admin" has tokenFile, which reads a file of this machine and sends it as a token`},
		{"proxy-url", func(c *clientcmdapi.Config) { cluster(c).ProxyURL = "socks5://attacker.example:1080" },
			`cluster "c" has proxy-url, which sends the connection through a proxy the host chose`},
		{"insecure-skip-tls-verify", func(c *clientcmdapi.Config) { cluster(c).InsecureSkipTLSVerify = true },
			`cluster "c" has insecure-skip-tls-verify, which turns off the check`},
		{"tls-server-name", func(c *clientcmdapi.Config) { cluster(c).TLSServerName = "attacker.example" },
			`cluster "c" has tls-server-name`},
		{"impersonation", func(c *clientcmdapi.Config) { user(c).ImpersonateGroups = []string{"system:masters"} },
			`user "kubernetes-admin" has act-as-groups, which makes the requests act as another identity`},
		{"basic authentication", func(c *clientcmdapi.Config) { user(c).Username, user(c).Password = "admin", "secret" },
			`user "kubernetes-admin" has username, which is basic authentication`},
		{"no CA", func(c *clientcmdapi.Config) { cluster(c).CertificateAuthorityData = nil },
			`cluster "c": no certificate-authority-data`},
		{"a key as the CA", func(c *clientcmdapi.Config) { cluster(c).CertificateAuthorityData = user(c).ClientKeyData },
			`certificate-authority-data holds a "RSA PRIVATE KEY" PEM block, not only certificates`},
		{"CA data that is no PEM", func(c *clientcmdapi.Config) { cluster(c).CertificateAuthorityData = []byte("/etc/passwd") },
			`certificate-authority-data holds no PEM certificate`},
		{"certificate without its key", func(c *clientcmdapi.Config) { user(c).ClientKeyData = nil },
			`client-certificate-data and client-key-data come together`},
		{"no credentials", func(c *clientcmdapi.Config) { user(c).ClientKeyData, user(c).ClientCertificateData = nil, nil },
			`user "kubernetes-admin": no credentials`},
		{"token with a newline", func(c *clientcmdapi.Config) { user(c).Token = "abc\nX-Injected: 1" },
			`token holds a space or control character`},
		{"no current context", func(c *clientcmdapi.Config) { c.CurrentContext = "gone" },
			`current-context "gone" names no context`},
		{"context without its user", func(c *clientcmdapi.Config) { c.Contexts[c.CurrentContext].AuthInfo = "nobody" },
			`names cluster "c" and user "nobody", and not both exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := adminConfig(t)
			tc.change(c)
			out, err := Vet(write(t, c), "cp-1", AdminConf, Servers(endpoint, nodes()))
			if err == nil || !strings.Contains(err.Error(), "cp-1: refusing /etc/kubernetes/admin.conf: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (kubeconfig %d bytes); want an error containing %q", err, len(out), tc.want)
			}
		})
	}
}

// TestVetAcceptsTheClustersOwn: a kubeconfig with the cluster's server (under any of its
// names, in any spelling of the same address), the CA and inline credentials is accepted, and
// what slipway keeps of it is those fields of the current context only.
func TestVetAcceptsTheClustersOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *clientcmdapi.Config)
	}{
		{"as kubeadm writes it", func(*clientcmdapi.Config) {}},
		{"an alternative name, in capitals with a final dot", func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "https://API.example.com.:6443/" }},
		{"a control plane's private address", func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "https://192.168.0.1:6443" }},
		{"a control plane's IPv6 address, spelt long", func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "https://[fd00:0:0::2]:6443" }},
		{"a token", func(c *clientcmdapi.Config) {
			u := c.AuthInfos["kubernetes-admin"]
			u.ClientCertificateData, u.ClientKeyData, u.Token = nil, nil, "abcdef.0123456789abcdef"
		}},
		{"harmless data beside", func(c *clientcmdapi.Config) {
			c.Contexts[c.CurrentContext].Namespace = "kube-system"
			c.Clusters["c"].DisableCompression = true
			c.Clusters["c"].Extensions = map[string]runtime.Object{"x": &runtime.Unknown{Raw: []byte(`{"a":1}`)}}
			c.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://elsewhere.example", CertificateAuthority: "/etc/ca.pem"}
			c.AuthInfos["other"] = &clientcmdapi.AuthInfo{TokenFile: "/etc/token"}
			c.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "other"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := adminConfig(t)
			tc.change(in)
			data, err := Vet(write(t, in), "cp-1", AdminConf, Servers(endpoint, nodes()))
			if err != nil {
				t.Fatal(err)
			}
			out, err := clientcmd.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Clusters) != 1 || len(out.AuthInfos) != 1 || len(out.Contexts) != 1 || out.CurrentContext != in.CurrentContext {
				t.Fatalf("kept %d clusters, %d users, %d contexts, current %q; want the current context alone", len(out.Clusters), len(out.AuthInfos), len(out.Contexts), out.CurrentContext)
			}
			c, u, x := out.Clusters["c"], out.AuthInfos["kubernetes-admin"], out.Contexts[in.CurrentContext]
			want, wu := in.Clusters["c"], in.AuthInfos["kubernetes-admin"]
			if c.Server != want.Server || string(c.CertificateAuthorityData) != string(want.CertificateAuthorityData) ||
				string(u.ClientCertificateData) != string(wu.ClientCertificateData) || string(u.ClientKeyData) != string(wu.ClientKeyData) || u.Token != wu.Token {
				t.Error("the server, CA or credentials changed on the way")
			}
			if c.DisableCompression || len(c.Extensions) > 0 || x.Namespace != "" {
				t.Errorf("kept more than the server, CA and credentials: %s", data)
			}
		})
	}
}
