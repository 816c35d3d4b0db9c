// Package manifests embeds the static Kubernetes manifests of the repository: the generated
// cluster.k8s.io CRDs, the machine-controller's deployment, RBAC and webhook configuration, and
// the OpenStack cloud-controller-manager's DaemonSet and RBAC, so that slipway installs exactly
// the files that are reviewed and tested here.
package manifests

import "embed"

// FS holds crds/*.yaml, machine-controller/*.yaml and openstack-ccm/*.yaml.
//
//go:embed crds/*.yaml machine-controller/*.yaml openstack-ccm/*.yaml
var FS embed.FS
