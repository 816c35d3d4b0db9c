package bootstrap

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"

func validConfig(os string) Config {
	return Config{
		OperatingSystem:   os,
		KubeletVersion:    "v1.36.3",
		APIServerEndpoint: "10.0.0.10:6443",
		CACertHash:        "sha256:" + strings.Repeat("ab", 32),
		Token:             "abcdef.0123456789abcdef",
		PackageRepository: "https://pkgs.k8s.io",
		SSHPublicKeys:     []string{testKey},
		Taints:            []Taint{{Key: "cluster.k8s.io/not-ready", Effect: "NoSchedule"}},
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name   string
		config func() Config
	}{
		{name: "ubuntu", config: func() Config { return validConfig("ubuntu") }},
		{name: "debian", config: func() Config { return validConfig("debian") }},
		{name: "ubuntu-mirror-external-upgrade", config: func() Config {
			c := validConfig("ubuntu")
			c.PackageRepository = "http://mirror.internal:8080/k8s/"
			c.ExternalCloudProvider = true
			c.DistUpgradeOnBoot = true
			c.SSHPublicKeys = nil
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.config())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("Render() differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}

func TestRenderRejects(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr string
	}{
		{name: "flatcar", mutate: func(c *Config) { c.OperatingSystem = "flatcar" }, wantErr: "flatcar is not supported yet"},
		{name: "unknown os", mutate: func(c *Config) { c.OperatingSystem = "windows" }, wantErr: "not supported"},
		{name: "shell in version", mutate: func(c *Config) { c.KubeletVersion = "1.36.3'; rm -rf /" }, wantErr: "kubelet version"},
		{name: "prerelease", mutate: func(c *Config) { c.KubeletVersion = "1.36.3-rc.0" }, wantErr: "kubelet version"},
		{name: "endpoint without port", mutate: func(c *Config) { c.APIServerEndpoint = "10.0.0.10" }, wantErr: "endpoint"},
		{name: "endpoint injection", mutate: func(c *Config) { c.APIServerEndpoint = "$(id):6443" }, wantErr: "endpoint"},
		{name: "bad hash", mutate: func(c *Config) { c.CACertHash = "sha256:xyz" }, wantErr: "hash"},
		{name: "bad token", mutate: func(c *Config) { c.Token = "ABCDEF.0123456789abcdef" }, wantErr: "token"},
		{name: "repo with quote", mutate: func(c *Config) { c.PackageRepository = "https://x/'y" }, wantErr: "package repository"},
		{name: "repo ftp", mutate: func(c *Config) { c.PackageRepository = "ftp://x" }, wantErr: "package repository"},
		{name: "two keys in one", mutate: func(c *Config) { c.SSHPublicKeys = []string{testKey + "\n" + testKey} }, wantErr: "SSH public key 0"},
		{name: "garbage key", mutate: func(c *Config) { c.SSHPublicKeys = []string{"ssh-rsa notbase64"} }, wantErr: "SSH public key 0"},
		{name: "bad taint", mutate: func(c *Config) { c.Taints = []Taint{{Key: "a b", Effect: "NoSchedule"}} }, wantErr: "taint 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig("ubuntu")
			tt.mutate(&c)
			_, err := Render(c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Render() error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewTokenSecret(t *testing.T) {
	a, err := NewTokenSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewTokenSecret()
	if !tokenRe.MatchString("abcdef."+a) || a == b {
		t.Fatalf("NewTokenSecret() = %q, %q: want two different [a-z0-9]{16}", a, b)
	}
}
