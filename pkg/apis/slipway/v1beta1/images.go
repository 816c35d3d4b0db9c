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
