package scripts_test

import (
	"strings"
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
		// assets.upload: containerd's release comes from the directory apply uploaded it to.
		{"prerequisites-debian-upload", "minimal", scripts.OS{ID: "debian", VersionID: "12"}, func(p *scripts.PrereqParams) {
			p.Cluster.Assets = v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: "/tmp/bin"}}
		}},
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
			checkScript(t, tt.name, got)
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
			checkScript(t, tt.name, got)
		})
	}
}

// TestPrerequisitesContainerd: the script carries the version's containerd policy, the release
// URL (http only when the manifest allows it), and both configuration versions, with the
// registry credentials in each.
func TestPrerequisitesContainerd(t *testing.T) {
	c := load(t, "registries")
	for _, tc := range []struct {
		name, version, baseURL string
		insecure               bool
		want                   []string
		wantErr                string
	}{
		{name: "v1.35 keeps containerd 1.6 and up", version: "v1.35.4",
			want: []string{"containerd_want='2.2.9'", "containerd_min='1.6.0'", "'https://github.com/containerd/containerd/releases/download'", "--proto '=https'"}},
		{name: "v1.36 needs containerd 2", version: "v1.36.3",
			want: []string{"containerd_min='2.0.0'", "version = 3", "version = 2",
				`[plugins."io.containerd.cri.v1.images".pinned_images]`, `sandbox = "registry.k8s.io/pause:3.10.1"`,
				`[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]`, `bin_dirs = ["/opt/cni/bin"]`,
				`[plugins."io.containerd.cri.v1.images".registry.configs."registry.example.com:5000".auth]`,
				`[plugins."io.containerd.grpc.v1.cri".registry.configs."registry.example.com:5000".auth]`}},
		{name: "an http mirror of the releases, allowed", version: "v1.36.3", baseURL: "http://10.0.0.5:8080/containerd/", insecure: true,
			want: []string{"'http://10.0.0.5:8080/containerd'\"/v${containerd_want}/${tarball}\"", "--proto '=http,https'"}},
		{name: "an http mirror of the releases, not allowed", version: "v1.36.3", baseURL: "http://10.0.0.5:8080/containerd",
			wantErr: "containerRuntime.containerd.release.baseURL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := *c
			cc.Versions.Kubernetes = tc.version
			cc.ContainerRuntime.Containerd.Release = v1beta1.ContainerdRelease{BaseURL: tc.baseURL, Insecure: tc.insecure}
			got, err := scripts.Prerequisites(scripts.OS{ID: "debian", VersionID: "12"}, scripts.PrereqParams{Cluster: &cc, SandboxImage: "registry.k8s.io/pause:3.10.1",
				RegistryCAs: map[string][]byte{"registry.example.com:5000": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("script lacks %s", w)
				}
			}
		})
	}
}
