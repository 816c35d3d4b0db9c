// Package terraform runs the repository's Terraform quick start, terraform/openstack, with the
// real terraform and terraform-provider-openstack against the OpenStack simulator: apply, a plan
// that finds nothing to change, the slipway_* outputs, and a destroy that leaves nothing behind.
// provider.sh builds the provider from the Go module proxy into the shared cache; Terraform
// finds it through dev_overrides in a CLI config, so no registry is contacted.
package terraform
