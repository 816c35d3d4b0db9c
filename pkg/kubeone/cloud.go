package kubeone

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// onOpenStack reports whether the cluster runs on OpenStack: the manifest says so, or names no
// cloud and the Terraform output's cloud_provider does.
func (c *converter) onOpenStack(k *cluster) bool {
	cp := &k.CloudProvider
	return cp.Openstack != nil || (cp.None == nil && c.tf.CloudProvider == "openstack")
}

func (c *converter) cloud(k *cluster, out *v1beta1.Cluster) {
	cp := &k.CloudProvider
	p := field.NewPath("cloudProvider")
	others := map[string]map[string]any{"aws": cp.AWS, "azure": cp.Azure, "digitalocean": cp.DigitalOcean, "gce": cp.GCE,
		"hetzner": cp.Hetzner, "kubevirt": cp.Kubevirt, "nutanix": cp.Nutanix, "equinixmetal": cp.EquinixMetal,
		"vmwareCloudDirector": cp.VMwareCloudDirector, "vsphere": cp.Vsphere}
	for _, name := range slices.Sorted(maps.Keys(others)) {
		if others[name] != nil {
			c.errs = append(c.errs, field.NotSupported(p.Child(name), "{}", []string{"openstack", "none"}))
		}
	}
	// A manifest that names no cloud has KubeOne take it from the Terraform output's
	// cloud_provider, and so has slipway: the cloud is left to the output, and what goes with it
	// is carried over as for a manifest that names it.
	fromTerraform := cp.Openstack == nil && cp.None == nil
	openstack := c.onOpenStack(k)
	none := cp.None != nil || (fromTerraform && c.tf.CloudProvider == "none")
	switch {
	case openstack:
		if !fromTerraform {
			out.CloudProvider.OpenStack = &v1beta1.OpenStackCloud{}
		}
		out.CloudProvider.External = true
		if !cp.External {
			// Kubernetes has had no in-tree OpenStack provider since v1.26, so inside slipway's
			// window a KubeOne cluster on OpenStack runs the external one already.
			c.warn(p.Child("external"), "set to true: slipway runs OpenStack only with the external cloud-controller-manager (Kubernetes has no in-tree OpenStack provider)")
			c.comment("cloudProvider.external", "KubeOne's manifest left external unset; slipway runs OpenStack only with the external cloud-controller-manager.")
		}
	case none:
		if !fromTerraform {
			out.CloudProvider.None = &v1beta1.NoneCloud{}
		}
		if cp.External {
			c.warn(p.Child("external"), "dropped: there is no cloud-controller-manager with cloudProvider.none")
		}
	case cp.External:
		// The cloud is the Terraform output's, which this conversion was not given.
		out.CloudProvider.External = true
	}
	if fromTerraform && out.CloudProvider.External {
		c.comment("cloudProvider", "The cloud comes from the Terraform output's cloud_provider, as it did for KubeOne.")
	}
	if cp.CloudConfig != "" {
		c.warn(p.Child("cloudConfig"), "not carried over: slipway writes the cloud-controller-manager's cloud.conf itself from the OS_* environment variables "+
			"(OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, OS_REGION_NAME, ... or an application credential); export the credentials of its [Global] section "+
			"that way. Its contents are not printed, as they hold secrets")
	}
	if cp.CSIConfig != "" {
		c.warn(p.Child("csiConfig"), "not supported: slipway does not deploy a CSI driver; the one KubeOne deployed keeps running, manage it yourself (for example as an addon)")
	}
	if cp.DisableBundledCSIDrivers {
		c.warn(p.Child("disableBundledCSIDrivers"), "no longer needed: slipway deploys no CSI driver")
	} else if openstack {
		c.warn(p.Child("disableBundledCSIDrivers"), "KubeOne deployed the Cinder CSI driver by default; slipway does not deploy it (the running one is left as it is), manage it yourself")
	}
	if cp.SecretProviderClassName != "" {
		c.warn(p.Child("secretProviderClassName"), "not supported: slipway keeps the cloud credentials in Secrets it writes")
	}
}

func (c *converter) runtime(k *cluster, out *v1beta1.Cluster) {
	p := field.NewPath("containerRuntime")
	if k.ContainerRuntime.Docker != nil {
		c.warn(p.Child("docker"), "not supported: slipway runs containerd only (as every KubeOne release since Kubernetes v1.24 does)")
	}
	if r := k.RegistryConfiguration; r != nil {
		out.RegistryConfiguration = &v1beta1.RegistryConfiguration{OverwriteRegistry: r.OverwriteRegistry, InsecureRegistry: r.InsecureRegistry}
	}
	cd := k.ContainerRuntime.Containerd
	if cd == nil {
		return
	}
	cp := p.Child("containerd")
	if cd.DeviceOwnershipFromSecurityContext != nil {
		c.warn(cp.Child("deviceOwnershipFromSecurityContext"), "not supported: slipway leaves containerd's default")
	}
	if cd.SandboxImage != "" {
		c.warn(cp.Child("sandboxImage"), "not supported: slipway uses the pause image of the Kubernetes version (under registryConfiguration.overwriteRegistry)")
	}
	for _, name := range slices.Sorted(maps.Keys(cd.Registries)) {
		r := cd.Registries[name]
		if out.ContainerRuntime.Containerd.Registries == nil {
			out.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{}
		}
		o := v1beta1.ContainerdRegistry{Mirrors: slices.Clone(r.Mirrors)}
		if r.TLSConfig != nil {
			o.TLSConfig = &v1beta1.RegistryTLSConfig{InsecureSkipVerify: r.TLSConfig.InsecureSkipVerify}
		}
		if r.Auth != nil {
			o.Auth = &v1beta1.RegistryAuth{Username: r.Auth.Username, Password: r.Auth.Password, Auth: r.Auth.Auth, IdentityToken: r.Auth.IdentityToken}
		}
		if r.OverridePath {
			c.warn(cp.Child("registries").Key(name).Child("overridePath"), "not supported: slipway's mirrors are registry hosts, tried with the usual /v2 path")
		}
		out.ContainerRuntime.Containerd.Registries[name] = o
	}
}
