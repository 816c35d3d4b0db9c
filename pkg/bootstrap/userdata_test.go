package bootstrap_test

import (
	"context"
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/test/golden"
)

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"

// testCA stands for the PEM of a registry's tlsConfig.caFile.
const testCA = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUslipwaytestcertificate0123456789wCgYIKoZIzj0E\n-----END CERTIFICATE-----\n"

// load reads testdata/clusters/<name>.yaml through slipway's own loader.
func load(t *testing.T, name string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: filepath.Join("testdata", "clusters", name+".yaml")})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return res.Cluster
}

func settings(t *testing.T, name string) bootstrap.Settings {
	t.Helper()
	c := load(t, name)
	var cas map[string][]byte
	if name == "site" {
		cas = map[string][]byte{"registry.example.com:5000": []byte(testCA)}
	}
	// Through the Secret's encoding, as the controller reads them.
	data, err := bootstrap.SettingsFor(c, cas).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s, err := bootstrap.ParseSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validConfig(t *testing.T, os, cluster string) bootstrap.Config {
	return bootstrap.Config{
		OperatingSystem:   os,
		KubeletVersion:    "v1.36.3",
		APIServerEndpoint: "10.0.0.10:6443",
		CACertHash:        "sha256:" + strings.Repeat("ab", 32),
		Token:             "abcdef.0123456789abcdef",
		SSHPublicKeys:     []string{testKey},
		Taints:            []bootstrap.Taint{{Key: "cluster.k8s.io/not-ready", Effect: "NoSchedule"}},
		Settings:          settings(t, cluster),
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name   string
		config func() bootstrap.Config
	}{
		{name: "ubuntu", config: func() bootstrap.Config { return validConfig(t, "ubuntu", "minimal") }},
		{name: "debian", config: func() bootstrap.Config { return validConfig(t, "debian", "minimal") }},
		{name: "ubuntu-site-upgrade", config: func() bootstrap.Config {
			c := validConfig(t, "ubuntu", "site")
			c.KubeletVersion = "1.37.2"
			c.DistUpgradeOnBoot = true
			c.SSHPublicKeys = nil
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bootstrap.Render(tt.config())
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".golden"), []byte(got))
		})
	}
}

// cloudConfig is the part of the user-data the tests read.
type cloudConfig struct {
	WriteFiles []struct {
		Path, Permissions, Content string
	} `json:"write_files"`
	RunCmd            []string `json:"runcmd"`
	SSHAuthorizedKeys []string `json:"ssh_authorized_keys"`
}

func parse(t *testing.T, ud string) (cloudConfig, map[string]string) {
	t.Helper()
	if !strings.HasPrefix(ud, "#cloud-config\n") {
		t.Fatalf("user-data does not start with #cloud-config")
	}
	var cc cloudConfig
	if err := yaml.UnmarshalStrict([]byte(ud), &cc, yaml.DisallowUnknownFields); err != nil {
		// Unknown top-level keys (package_update and the like) are fine: parse leniently.
		if err := yaml.Unmarshal([]byte(ud), &cc); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{}
	for _, f := range cc.WriteFiles {
		files[f.Path] = f.Content
	}
	return cc, files
}

// TestOneRenderer checks the point of the package: a pool machine runs exactly the scripts
// that apply runs over SSH on a static worker of the same cluster, for the Machine's kubelet
// version, and nothing of the manifest is lost on the way through the Secret. Only where the
// manifest has registry credentials or a proxy do they read those from the files the machine
// fetches (scripts' TestCredentialsFilesOnTheHost shows the host ends up with the same).
func TestOneRenderer(t *testing.T) {
	for _, name := range []string{"minimal", "site"} {
		t.Run(name, func(t *testing.T) {
			c := validConfig(t, "ubuntu", name)
			c.KubeletVersion = "v1.35.4"
			ud, err := bootstrap.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			_, files := parse(t, ud)

			// What apply renders for a static worker on Ubuntu, the manifest loaded afresh
			// and its version set to the Machine's.
			cluster := load(t, name)
			cluster.Versions.Kubernetes = "v1.35.4"
			sandbox, err := kubeadm.PauseImage(cluster)
			if err != nil {
				t.Fatal(err)
			}
			var cas map[string][]byte
			if name == "site" {
				cas = map[string][]byte{"registry.example.com:5000": []byte(testCA)}
			}
			dir := ""
			if name == "site" {
				dir = "/run/slipway/credentials"
			}
			prereq, err := scripts.Prerequisites(scripts.OS{ID: "ubuntu", VersionID: "24.04"}, scripts.PrereqParams{
				Cluster: cluster, SandboxImage: sandbox, RegistryCAs: cas, UpstreamDNS: cluster.ClusterNetwork.UpstreamDNS, CredentialsDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			install, err := scripts.InstallKubernetes(scripts.OS{ID: "ubuntu", VersionID: "24.04"}, scripts.InstallParams{Cluster: cluster, Arch: "amd64", CredentialsDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if files["/etc/slipway/node/prerequisites.sh"] != prereq {
				t.Error("the user-data's prerequisites differ from apply's for a static worker")
			}
			if files["/etc/slipway/node/install-kubernetes.sh"] != install {
				t.Error("the user-data's install-kubernetes differs from apply's for a static worker")
			}
			if !strings.Contains(install, "want='1.35.4'") {
				t.Error("the install script is not for the Machine's kubelet version")
			}
		})
	}
}

// TestRenderSite checks what the site's manifest must carry onto a pool machine.
func TestRenderSite(t *testing.T) {
	c := validConfig(t, "debian", "site")
	ud, err := bootstrap.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	cc, files := parse(t, ud)
	prereq := files["/etc/slipway/node/prerequisites.sh"]
	for _, want := range []string{
		"http://files.example.com/containerd", // containerd's release
		"hub-cache.example.com",               // a mirror
		"MIIBdzCCAR2gAwIBAgIU",                // the registry's CA, read on the operator's machine
		"mirror.example.com/k8s/pause:3.10.2", // the sandbox image under overwriteRegistry
		"/run/slipway/credentials/proxy.env",  // the proxy and the registry credentials, fetched
		"/run/slipway/credentials/containerd-auth-v2.toml",
	} {
		if !strings.Contains(prereq, want) {
			t.Errorf("prerequisites lack %q", want)
		}
	}
	if !strings.Contains(files["/etc/slipway/node/install-kubernetes.sh"], "http://files.example.com/kubernetes/v1.36.3/bin/linux/amd64") {
		t.Error("install-kubernetes does not download from assets.url")
	}
	join := files["/run/slipway/join.yaml"]
	for _, want := range []string{"cloud-provider", "value: external", "abcdef.0123456789abcdef", "10.0.0.10:6443", "cluster.k8s.io/not-ready"} {
		if !strings.Contains(join, want) {
			t.Errorf("JoinConfiguration lacks %q:\n%s", want, join)
		}
	}
	for _, f := range cc.WriteFiles {
		if f.Permissions != "0700" && f.Permissions != "0600" {
			t.Errorf("%s is written %s: the join configuration and the fetch's hold the bootstrap token, want root only", f.Path, f.Permissions)
		}
	}
	if len(cc.RunCmd) != 1 || cc.RunCmd[0] != "/usr/local/sbin/slipway-join" {
		t.Errorf("runcmd = %v", cc.RunCmd)
	}
	for path, want := range map[string]string{
		"/usr/local/sbin/slipway-join": "kubelet.allowCgroupV1: true",
		"/run/slipway/join.yaml":       "HTTPProxyCIDR",
	} {
		if !strings.Contains(files[path], want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
	c.Settings.Cluster.Kubelet.AllowCgroupV1 = true
	allowed, err := bootstrap.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	_, allowedFiles := parse(t, allowed)
	if !strings.Contains(allowedFiles["/usr/local/sbin/slipway-join"], "--ignore-preflight-errors=SystemVerification") {
		t.Error("with kubelet.allowCgroupV1 the runner does not let a cgroup v1 host join")
	}
	// Every script is valid bash, the fetcher valid Python 3.
	for path, content := range allowedFiles {
		if !strings.HasSuffix(path, ".sh") && !strings.HasSuffix(path, "slipway-join") {
			continue
		}
		cmd := exec.Command("bash", "-n")
		cmd.Stdin = strings.NewReader(content)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s is not valid bash: %v\n%s", path, err, out)
		}
	}
	cmd := exec.Command(python(t), "-c", "import ast, sys; ast.parse(sys.stdin.read())")
	cmd.Stdin = strings.NewReader(allowedFiles["/etc/slipway/node/fetch-credentials"])
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the fetcher is not valid Python 3: %v\n%s", err, out)
	}
	// Nova refuses user_data over 65535 bytes, base64-encoded.
	if n := base64.StdEncoding.EncodedLen(len(ud)); n > 65535 {
		t.Errorf("user-data is %d bytes base64-encoded: over Nova's limit of 65535", n)
	}
}

func TestSettingsLeaveOutHostSecrets(t *testing.T) {
	c := load(t, "site")
	c.ControlPlane.Hosts[0].SSHPrivateKeyFile = "/home/ops/.ssh/secret-key"
	data, err := bootstrap.SettingsFor(c, nil).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"secret-key", "cp-1", "sshUsername"} {
		if strings.Contains(string(data), unwanted) {
			t.Errorf("the node settings hold %q", unwanted)
		}
	}
	for _, want := range []string{"10.0.0.10", "192.0.2.12", "hub-cache.example.com", "proxy.example.com"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the node settings lack %q", want)
		}
	}
}

func TestParseSettingsRejects(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"cluster":{"versions":{"kubernetes":"v1.36.3"}},"extra":1}`, `unknown field "extra"`},
		{`{"cluster":{}}`, "names no Kubernetes version"},
		{`not json`, "machine-controller-node-settings"},
	} {
		if _, err := bootstrap.ParseSettings([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSettings(%s) = %v, want an error containing %q", tc.data, err, tc.want)
		}
	}
}

func TestRenderRejects(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *bootstrap.Config)
		wantErr string
	}{
		{name: "flatcar", mutate: func(c *bootstrap.Config) { c.OperatingSystem = "flatcar" }, wantErr: "flatcar is not supported yet"},
		{name: "unknown os", mutate: func(c *bootstrap.Config) { c.OperatingSystem = "windows" }, wantErr: "not supported"},
		{name: "shell in version", mutate: func(c *bootstrap.Config) { c.KubeletVersion = "1.36.3'; rm -rf /" }, wantErr: "kubelet version"},
		{name: "prerelease", mutate: func(c *bootstrap.Config) { c.KubeletVersion = "1.36.3-rc.0" }, wantErr: "kubelet version"},
		{name: "outside the window", mutate: func(c *bootstrap.Config) { c.KubeletVersion = "1.30.1" }, wantErr: "outside slipway's supported versions"},
		{name: "endpoint without port", mutate: func(c *bootstrap.Config) { c.APIServerEndpoint = "10.0.0.10" }, wantErr: "endpoint"},
		{name: "endpoint injection", mutate: func(c *bootstrap.Config) { c.APIServerEndpoint = "$(id):6443" }, wantErr: "endpoint"},
		{name: "bad hash", mutate: func(c *bootstrap.Config) { c.CACertHash = "sha256:xyz" }, wantErr: "hash"},
		{name: "bad token", mutate: func(c *bootstrap.Config) { c.Token = "ABCDEF.0123456789abcdef" }, wantErr: "token"},
		{name: "upload source", mutate: func(c *bootstrap.Config) {
			c.Settings.Cluster.Assets = v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: "/srv/k8s"}}
		}, wantErr: "assets.upload cannot install pool machines"},
		{name: "two keys in one", mutate: func(c *bootstrap.Config) { c.SSHPublicKeys = []string{testKey + "\n" + testKey} }, wantErr: "SSH public key 0"},
		{name: "garbage key", mutate: func(c *bootstrap.Config) { c.SSHPublicKeys = []string{"ssh-rsa notbase64"} }, wantErr: "SSH public key 0"},
		{name: "bad taint", mutate: func(c *bootstrap.Config) { c.Taints = []bootstrap.Taint{{Key: "a b", Effect: "NoSchedule"}} }, wantErr: "taint 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t, "ubuntu", "minimal")
			tt.mutate(&c)
			_, err := bootstrap.Render(c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Render() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
