// Package manifests embeds the static Kubernetes manifests of the repository: the generated
// cluster.k8s.io CRDs and the machine-controller's deployment, RBAC and webhook configuration,
// so that slipway installs exactly the files that are reviewed and tested here.
package manifests

import "embed"

// FS holds crds/*.yaml and machine-controller/*.yaml.
//
//go:embed crds/*.yaml machine-controller/*.yaml
var FS embed.FS
