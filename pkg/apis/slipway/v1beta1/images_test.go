package v1beta1

import (
	"strings"
	"testing"
)

func TestMachineControllerImageDefault(t *testing.T) {
	tests := []struct {
		name     string
		tag      string
		registry *RegistryConfiguration
		image    string // set in the manifest
		want     string
	}{
		{name: "version tag", tag: "v1.2.3", want: "ghcr.io/slipway-dev/machine-controller:v1.2.3"},
		{name: "build without a version", tag: "", want: "ghcr.io/slipway-dev/machine-controller:latest"},
		{name: "overwriteRegistry rewrites the default", tag: "v1.2.3",
			registry: &RegistryConfiguration{OverwriteRegistry: "registry.example.com"},
			want:     "registry.example.com/slipway-dev/machine-controller:v1.2.3"},
		{name: "overwriteRegistry with a port and a path", tag: "v0.1.0-3-gabcdef0-dirty",
			registry: &RegistryConfiguration{OverwriteRegistry: "172.30.0.2:5000/mirror", InsecureRegistry: true},
			want:     "172.30.0.2:5000/mirror/slipway-dev/machine-controller:v0.1.0-3-gabcdef0-dirty"},
		{name: "an image the manifest names is kept", tag: "v1.2.3",
			registry: &RegistryConfiguration{OverwriteRegistry: "registry.example.com"},
			image:    "quay.io/me/mc:dev", want: "quay.io/me/mc:dev"},
		{name: "empty registry configuration", tag: "v1", registry: &RegistryConfiguration{},
			want: "ghcr.io/slipway-dev/machine-controller:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{RegistryConfiguration: tt.registry, MachineController: MachineController{Image: tt.image}}
			SetDefaults(c, tt.tag)
			if got := c.MachineController.Image; got != tt.want {
				t.Errorf("machineController.image = %q, want %q", got, tt.want)
			}
			SetDefaults(c, "other")
			if got := c.MachineController.Image; got != tt.want {
				t.Errorf("defaulting twice changed machineController.image to %q", got)
			}
		})
	}
}

func TestRegistryRewrite(t *testing.T) {
	tests := []struct {
		name, overwrite, ref, want, err string
	}{
		{name: "unset", ref: "ghcr.io/flannel-io/flannel:v0.27.4", want: "ghcr.io/flannel-io/flannel:v0.27.4"},
		{name: "nested repository", overwrite: "registry.example.com", ref: "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1",
			want: "registry.example.com/provider-os/openstack-cloud-controller-manager:v1.34.1"},
		{name: "docker hub short name", overwrite: "r.example.com/m", ref: "docker.io/calico/node:v3.30.3", want: "r.example.com/m/calico/node:v3.30.3"},
		{name: "not a reference", overwrite: "registry.example.com", ref: "ghcr.io/UPPER/case:v1", err: "image ghcr.io/UPPER/case:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &RegistryConfiguration{OverwriteRegistry: tt.overwrite}
			got, err := r.Rewrite(tt.ref)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Rewrite(%q) = %q, %v; want an error naming %q", tt.ref, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Rewrite(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
			}
		})
	}
	var none *RegistryConfiguration
	if got, err := none.Rewrite("a.io/b:c"); err != nil || got != "a.io/b:c" {
		t.Errorf("nil configuration: Rewrite = %q, %v", got, err)
	}
}
