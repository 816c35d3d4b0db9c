package images

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Source is where slipway's source lives, for the org.opencontainers.image.source label.
const Source = "https://github.com/slipway-dev/slipway"

// ccmSource is the cloud-controller-manager's upstream repository.
const ccmSource = "https://github.com/kubernetes/cloud-provider-openstack"

// NonRoot is the user and group the images run as: distroless's "nonroot", which the
// machine-controller Deployment's runAsUser names.
const NonRoot = 65532

// Spec is one image to assemble.
type Spec struct {
	// Refs are the references the image is tagged with; the first is its name.
	Refs []string
	// Binary is the static executable on this machine, and Path where it goes in the image
	// (without a leading slash).
	Binary, Path string
	// Entrypoint and Cmd are the image's; a pod's command and args replace them.
	Entrypoint, Cmd []string
	// Labels are OCI annotations of the image configuration.
	Labels map[string]string
	// User is the image's "user:group"; empty means NonRoot's. Test images that expect to run
	// as root (agnhost) set "0:0".
	User string
	// Files go into the binary's layer beside it: what the program reads at run time besides
	// the base (agnhost's serving certificates, its second name). A file of the base given
	// here (etc/passwd) replaces it in this image only.
	Files []File
}

// File is one extra entry of an image: a regular file, a directory when Name ends in "/", or
// a symbolic link to Link when Link is set.
type File struct {
	// Name is the path in the image, without a leading slash.
	Name string
	// Mode is the permission bits (0o644, 0o755, 0o1777).
	Mode int64
	Data []byte
	Link string
}

// MachineController is the machine-controller image of slipway at version, built from revision
// (a commit), under the reference that slipway of that version deploys by default.
func MachineController(binary, version, revision string) Spec {
	tag := version
	if tag == "" || tag == "dev" {
		tag = "latest"
	}
	labels := map[string]string{
		"org.opencontainers.image.title":   "machine-controller",
		"org.opencontainers.image.version": version,
		"org.opencontainers.image.source":  Source,
	}
	if revision != "" {
		labels["org.opencontainers.image.revision"] = revision
	}
	return Spec{
		Refs:       []string{v1beta1.DefaultMachineControllerImage(tag)},
		Binary:     binary,
		Path:       "machine-controller",
		Entrypoint: []string{"/machine-controller"},
		Labels:     labels,
	}
}

// CloudControllerManager is the OpenStack cloud-controller-manager image, laid out like
// upstream's (the binary at /bin/openstack-cloud-controller-manager, which upstream's manifests
// name in their args, and no entrypoint) under upstream's reference, addons.OpenStackCCMImage.
// Nothing of slipway's version is in it, so that the image under that tag changes only with
// the binary.
func CloudControllerManager(binary string) Spec {
	return Spec{
		Refs:   []string{addons.OpenStackCCMImage},
		Binary: binary,
		Path:   "bin/openstack-cloud-controller-manager",
		Cmd:    []string{"/bin/openstack-cloud-controller-manager"},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "openstack-cloud-controller-manager",
			"org.opencontainers.image.version":     CCMVersion(),
			"org.opencontainers.image.source":      ccmSource,
			"org.opencontainers.image.description": "k8s.io/cloud-provider-openstack " + CCMVersion() + ", built by slipway's pkg/images",
		},
	}
}

// CCMVersion is the cloud-provider-openstack release that addons.OpenStackCCMImage names.
func CCMVersion() string {
	return addons.OpenStackCCMImage[strings.LastIndex(addons.OpenStackCCMImage, ":")+1:]
}

// Tagged returns s with extra tags on its first reference's repository: the sandbox serves the
// machine-controller as "latest" too, which builds of slipway without a version deploy.
func (s Spec) Tagged(tags ...string) (Spec, error) {
	i := strings.LastIndex(s.Refs[0], ":")
	if i < 0 || strings.Contains(s.Refs[0][i:], "/") {
		return s, fmt.Errorf("image %s has no tag", s.Refs[0])
	}
	s.Refs = append([]string(nil), s.Refs...)
	for _, t := range tags {
		s.Refs = append(s.Refs, s.Refs[0][:i+1]+t)
	}
	return s, nil
}
