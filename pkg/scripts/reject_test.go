package scripts_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// TestQuote runs quoted values through bash and checks they come back unchanged.
func TestQuote(t *testing.T) {
	values := []string{"", "plain", "it's", `"$(touch /tmp/pwned)"`, "a b\tc", "back\\slash", "'", "$HOME", "*", "ünïcode"}
	for _, v := range values {
		q, err := scripts.Quote(v)
		if err != nil {
			t.Fatalf("Quote(%q): %v", v, err)
		}
		out, err := exec.Command("bash", "-c", "printf %s "+q).Output()
		if err != nil || string(out) != v {
			t.Errorf("bash read Quote(%q) = %s back as %q (%v)", v, q, out, err)
		}
	}
	for _, bad := range []string{"a\nb", "a\x00b", "a\rb"} {
		if _, err := scripts.Quote(bad); err == nil {
			t.Errorf("Quote(%q) accepted a line break or NUL", bad)
		}
	}
}

func TestRejects(t *testing.T) {
	debian := scripts.OS{ID: "debian", VersionID: "12"}
	prereq := func(mutate func(p *scripts.PrereqParams)) func() error {
		return func() error {
			p := scripts.PrereqParams{Cluster: load(t, "minimal"), SandboxImage: "registry.k8s.io/pause:3.10.1"}
			mutate(&p)
			_, err := scripts.Prerequisites(debian, p)
			return err
		}
	}
	tests := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"unknown OS", func() error {
			_, err := scripts.Prerequisites(scripts.OS{ID: "arch"}, scripts.PrereqParams{Cluster: load(t, "minimal"), SandboxImage: "x"})
			return err
		}, `unsupported operating system "arch"`},
		{"sandbox image with a newline", prereq(func(p *scripts.PrereqParams) { p.SandboxImage = "pause\nrm -rf /" }), "line break"},
		{"upstream DNS not an IP", prereq(func(p *scripts.PrereqParams) { p.UpstreamDNS = []string{"8.8.8.8; reboot"} }), "not an IP address"},
		{"credentials for every registry", prereq(func(p *scripts.PrereqParams) {
			p.Cluster.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{"*": {Auth: &v1beta1.RegistryAuth{Auth: "eA=="}}}
		}), "credentials need a registry name"},
		{"CA file contents missing", prereq(func(p *scripts.PrereqParams) {
			p.Cluster.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{"r.example.com": {TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: "/ca.pem"}}}
		}), "were not given"},
		{"heredoc delimiter in a CA file", prereq(func(p *scripts.PrereqParams) {
			p.Cluster.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{"r.example.com": {TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: "/ca.pem"}}}
			p.RegistryCAs = map[string][]byte{"r.example.com": []byte("x\nSLIPWAY_EOF\nrm -rf /\n")}
		}), "contains the line SLIPWAY_EOF"},
		{"proxy with a quote", prereq(func(p *scripts.PrereqParams) { p.Cluster.Proxy.HTTP = `http://p"x` }), "may not contain quotes"},
		{"install for an unknown architecture", func() error {
			c := load(t, "minimal")
			c.Assets = v1beta1.Assets{URL: &v1beta1.URLAssets{BaseURL: "https://dl.k8s.io/release"}}
			_, err := scripts.InstallKubernetes(debian, scripts.InstallParams{Cluster: c, Arch: "s390x"})
			return err
		}, `architecture "s390x"`},
		{"install over plain http without insecure", func() error {
			c := load(t, "minimal")
			c.Assets = v1beta1.Assets{URL: &v1beta1.URLAssets{BaseURL: "http://assets.example.com/release"}}
			_, err := scripts.InstallKubernetes(debian, scripts.InstallParams{Cluster: c, Arch: "amd64"})
			return err
		}, "http://assets.example.com/release/v1.36.3/bin/linux/amd64 is plain http and assets.url.insecure is not set"},
		{"install an unsupported version", func() error {
			c := load(t, "minimal")
			c.Versions.Kubernetes = "v1.20.0"
			_, err := scripts.InstallKubernetes(debian, scripts.InstallParams{Cluster: c, Arch: "amd64"})
			return err
		}, "unsupported version"},
		{"reset without a cluster", func() error {
			_, err := scripts.Reset(debian, scripts.ResetParams{})
			return err
		}, "no cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestFamilyOf(t *testing.T) {
	for id, want := range map[string]scripts.Family{"debian": scripts.Debian, "ubuntu": scripts.Debian, "rhel": scripts.RHEL,
		"rocky": scripts.RHEL, "centos": scripts.RHEL, "almalinux": scripts.RHEL, "flatcar": scripts.Flatcar} {
		if got, err := scripts.FamilyOf(scripts.OS{ID: id}); err != nil || got != want {
			t.Errorf("FamilyOf(%s) = %q, %v; want %q", id, got, err, want)
		}
	}
}
