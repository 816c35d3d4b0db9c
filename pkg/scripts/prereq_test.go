package scripts_test

import (
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

func TestPrerequisitesGolden(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		os      scripts.OS
		params  func(p *scripts.PrereqParams)
	}{
		{"prerequisites-debian", "minimal", scripts.OS{ID: "debian", VersionID: "12"}, nil},
		{"prerequisites-ubuntu-registries-proxy", "registries", scripts.OS{ID: "ubuntu", VersionID: "24.04"}, func(p *scripts.PrereqParams) {
			p.RegistryCAs = map[string][]byte{"registry.example.com:5000": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}
			p.UpstreamDNS = []string{"10.0.0.2", "10.0.0.3"}
		}},
		{"prerequisites-rocky", "registries", scripts.OS{ID: "rocky", VersionID: "9.4"}, func(p *scripts.PrereqParams) {
			p.RegistryCAs = map[string][]byte{"registry.example.com:5000": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}
		}},
		{"prerequisites-flatcar", "minimal", scripts.OS{ID: "flatcar", VersionID: "4081.2.0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := scripts.PrereqParams{Cluster: load(t, tt.cluster), SandboxImage: "registry.k8s.io/pause:3.10.1"}
			if tt.params != nil {
				tt.params(&p)
			}
			got, err := scripts.Prerequisites(tt.os, p)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, got)
		})
	}
}

func TestInstallKubernetesGolden(t *testing.T) {
	debian := scripts.OS{ID: "debian", VersionID: "12"}
	tests := []struct {
		name    string
		cluster string
		os      scripts.OS
		assets  func(c *v1beta1.Cluster)
	}{
		{"install-debian-packages", "minimal", debian, nil},
		{"install-ubuntu-packages-proxy", "registries", scripts.OS{ID: "ubuntu", VersionID: "22.04"}, nil},
		{"install-debian-url", "minimal", debian, func(c *v1beta1.Cluster) {
			c.Assets = v1beta1.Assets{URL: &v1beta1.URLAssets{BaseURL: "http://assets.example.com/release", Insecure: true}}
		}},
		{"install-debian-upload", "minimal", debian, func(c *v1beta1.Cluster) {
			c.Assets = v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: "/tmp/bin"}}
		}},
		{"install-rhel-packages", "minimal", scripts.OS{ID: "almalinux", VersionID: "9.4"}, nil},
		{"install-flatcar", "minimal", scripts.OS{ID: "flatcar", VersionID: "4081.2.0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, tt.cluster)
			if tt.assets != nil {
				tt.assets(c)
			}
			got, err := scripts.InstallKubernetes(tt.os, scripts.InstallParams{Cluster: c, Arch: "amd64"})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, got)
		})
	}
}
