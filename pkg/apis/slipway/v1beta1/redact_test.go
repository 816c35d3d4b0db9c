package v1beta1

import (
	"slices"
	"testing"
)

func TestRedactedAndSecrets(t *testing.T) {
	c := &Cluster{
		ContainerRuntime: ContainerRuntime{Containerd: Containerd{Registries: map[string]ContainerdRegistry{
			"docker.io": {Auth: &RegistryAuth{Username: "robot", Password: "pass-word"}},
			// base64("robot:s3cr3t-pw")
			"quay.io": {Auth: &RegistryAuth{Auth: "cm9ib3Q6czNjcjN0LXB3"}},
			"ghcr.io": {Auth: &RegistryAuth{IdentityToken: "id-token"}},
			"gcr.io":  {Mirrors: []string{"https://m.example.com"}},
		}}},
		Proxy:         Proxy{HTTP: "http://u:proxy-pw@proxy:3128", HTTPS: "http://proxy:3128"},
		CloudProvider: CloudProvider{CloudConfig: "[Global]\npassword=x\n"},
	}
	r := c.Redacted()
	if a := r.ContainerRuntime.Containerd.Registries["docker.io"].Auth; a.Password != RedactedValue || a.Username != "robot" {
		t.Errorf("docker.io auth = %+v", a)
	}
	if r.ContainerRuntime.Containerd.Registries["quay.io"].Auth.Auth != RedactedValue || r.ContainerRuntime.Containerd.Registries["ghcr.io"].Auth.IdentityToken != RedactedValue {
		t.Error("auth or identityToken shown")
	}
	if r.Proxy.HTTP != "http://u:xxxxx@proxy:3128" || r.Proxy.HTTPS != "http://proxy:3128" || r.CloudProvider.CloudConfig != RedactedValue {
		t.Errorf("proxy %q %q, cloudConfig %q", r.Proxy.HTTP, r.Proxy.HTTPS, r.CloudProvider.CloudConfig)
	}
	if c.ContainerRuntime.Containerd.Registries["docker.io"].Auth.Password != "pass-word" || c.Proxy.HTTP != "http://u:proxy-pw@proxy:3128" {
		t.Error("Redacted changed the original")
	}
	got := c.Secrets()
	slices.Sort(got)
	want := []string{"cm9ib3Q6czNjcjN0LXB3", "id-token", "pass-word", "proxy-pw", "s3cr3t-pw"}
	if !slices.Equal(got, want) {
		t.Errorf("Secrets() = %q, want %q", got, want)
	}
}
