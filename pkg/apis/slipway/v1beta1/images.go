package v1beta1

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
)

// DefaultMachineControllerImage is the machine-controller image that slipway at version tag
// deploys unless machineController.image says otherwise: the image `make image` builds from the
// same commit (tag "latest" for a build without a version). It is the one place that says so.
func DefaultMachineControllerImage(tag string) string {
	return DefaultMachineController + ":" + or(tag, "latest")
}

// Rewrite returns ref with its registry replaced by OverwriteRegistry, keeping the repository
// path and the tag: with overwriteRegistry registry.example.com, ghcr.io/flannel-io/flannel:v1
// becomes registry.example.com/flannel-io/flannel:v1. A nil configuration, or one without
// OverwriteRegistry, returns ref unchanged.
func (r *RegistryConfiguration) Rewrite(ref string) (string, error) {
	if r == nil || r.OverwriteRegistry == "" {
		return ref, nil
	}
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	return r.OverwriteRegistry + "/" + tag.RepositoryStr() + ":" + tag.TagStr(), nil
}

// machineControllerImage is the default machine-controller image under r: rewritten like every
// system image. A rewrite that fails leaves the default for validation to name.
func (r *RegistryConfiguration) machineControllerImage(imageTag string) string {
	def := DefaultMachineControllerImage(imageTag)
	if img, err := r.Rewrite(def); err == nil {
		return img
	}
	return def
}

// WithOverwriteRegistry returns a copy of c as SetDefaults would have left it had the manifest
// said overwriteRegistry: registry ("" for none): the registry configuration replaced, and the
// machine-controller image, when it is the default under c's own registry configuration,
// replaced by the default under registry. An image the manifest names is kept, as the cluster
// pulls it as written (one that is spelt exactly like the default is taken for it).
// imageTag is SetDefaults' tag. mirror-images pairs the images of two such copies: where the
// cluster would pull each without the overwrite, and the name it gets with it.
func (c *Cluster) WithOverwriteRegistry(registry, imageTag string) *Cluster {
	out := *c
	rc := RegistryConfiguration{}
	if c.RegistryConfiguration != nil {
		rc = *c.RegistryConfiguration
	}
	rc.OverwriteRegistry = registry
	out.RegistryConfiguration = &rc
	if c.MachineController.Image == c.RegistryConfiguration.machineControllerImage(imageTag) {
		out.MachineController.Image = rc.machineControllerImage(imageTag)
	}
	return &out
}
