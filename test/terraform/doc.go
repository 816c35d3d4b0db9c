// Package terraform runs the repository's Terraform quick start, terraform/openstack, with the
// real terraform and terraform-provider-openstack against the OpenStack simulator, whose servers
// boot as sandbox hosts: apply, a plan that finds nothing to change, the slipway_* outputs, SSH
// to the bastion's floating IP and through it to each control plane, and a destroy that leaves
// nothing behind, in the cloud or in Docker.
// provider.sh builds the provider from the Go module proxy into the shared cache; Terraform
// finds it through dev_overrides in a CLI config, so no registry is contacted.
package terraform
