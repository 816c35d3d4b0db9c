package mirror

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/imagelist"
)

// Plan returns what to copy for c's cluster into registry: each image's reference without
// registryConfiguration.overwriteRegistry (From, where the cluster would otherwise pull it)
// and with overwriteRegistry: registry (To, exactly what a cluster installed so pulls). An
// image the manifest names itself (machineController.image) keeps its name under any
// overwriteRegistry, so its From equals its To: there is nothing to copy. c must be
// config.Load's result, and imageTag the tag it was loaded with.
func Plan(c *v1beta1.Cluster, registry, imageTag string) ([]imagelist.Move, error) {
	if err := CheckRegistry(registry); err != nil {
		return nil, err
	}
	return imagelist.Moves(c.WithOverwriteRegistry("", imageTag), c.WithOverwriteRegistry(registry, imageTag))
}

// CheckRegistry checks a destination as overwriteRegistry takes it: host[:port][/path], with no
// scheme.
func CheckRegistry(registry string) error {
	const want = "want host[:port][/path], as registryConfiguration.overwriteRegistry takes it"
	if strings.Contains(registry, "@") {
		// Not quoted: what precedes the @ would be a password.
		return fmt.Errorf("the registry holds an @: %s, without credentials (slipway pushes with those of your Docker config)", want)
	}
	if strings.Contains(registry, "://") {
		return fmt.Errorf("registry %q: %s, without a scheme (--insecure allows plain http)", registry, want)
	}
	host, path, _ := strings.Cut(registry, "/")
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil || strings.HasSuffix(registry, "/") {
		return fmt.Errorf("registry %q: %s", registry, want)
	}
	if path != "" {
		if _, err := name.NewRepository(registry, name.StrictValidation); err != nil {
			return fmt.Errorf("registry %q: the path %q is not a repository path (lowercase letters, digits and separators): %s", registry, path, want)
		}
	}
	return nil
}
