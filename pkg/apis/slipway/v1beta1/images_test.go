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

// TestWithOverwriteRegistry: the copy is what SetDefaults gives a manifest that says the other
// overwriteRegistry, and c is left as it was.
func TestWithOverwriteRegistry(t *testing.T) {
	const tag = "v1.2.3"
	tests := []struct {
		name          string
		from          string // the manifest's overwriteRegistry
		image         string // the manifest's machineController.image
		to, wantImage string
	}{
		{name: "none to a registry", to: "reg.example:5000/m", wantImage: "reg.example:5000/m/slipway-dev/machine-controller:v1.2.3"},
		{name: "a registry to none", from: "other.example", wantImage: "ghcr.io/slipway-dev/machine-controller:v1.2.3"},
		{name: "a registry to another", from: "other.example", to: "reg.example", wantImage: "reg.example/slipway-dev/machine-controller:v1.2.3"},
		{name: "a named image is kept", from: "other.example", image: "quay.example/me/mc:v9", to: "reg.example", wantImage: "quay.example/me/mc:v9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{MachineController: MachineController{Image: tt.image}}
			if tt.from != "" {
				c.RegistryConfiguration = &RegistryConfiguration{OverwriteRegistry: tt.from, InsecureRegistry: true}
			}
			SetDefaults(c, tag)
			before := c.MachineController.Image
			got := c.WithOverwriteRegistry(tt.to, tag)
			want := &Cluster{MachineController: MachineController{Image: tt.image}, RegistryConfiguration: &RegistryConfiguration{OverwriteRegistry: tt.to}}
			SetDefaults(want, tag)
			if got.RegistryConfiguration.OverwriteRegistry != tt.to || got.MachineController.Image != tt.wantImage || want.MachineController.Image != tt.wantImage {
				t.Errorf("overwriteRegistry %q, image %q; want %q, %q (SetDefaults gives %q)", got.RegistryConfiguration.OverwriteRegistry,
					got.MachineController.Image, tt.to, tt.wantImage, want.MachineController.Image)
			}
			if tt.from != "" && !got.RegistryConfiguration.InsecureRegistry {
				t.Error("insecureRegistry was dropped")
			}
			if c.MachineController.Image != before || (c.RegistryConfiguration != nil && c.RegistryConfiguration.OverwriteRegistry != tt.from) {
				t.Errorf("c changed: %+v, %q", c.RegistryConfiguration, c.MachineController.Image)
			}
		})
	}
}
