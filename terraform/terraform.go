// Package terraform holds the repository's Terraform configurations, embedded so that slipway
// init can write a copy of one for a new cluster: openstack/, the production-shaped OpenStack
// example whose outputs follow slipway's Terraform contract.
package terraform

import "embed"

// OpenStack is terraform/openstack under openstack/: its .tf files and
// terraform.tfvars.example, by name, so that no state file or terraform.tfvars left in a
// working copy is ever embedded in slipway.
//
//go:embed openstack/*.tf openstack/terraform.tfvars.example
var OpenStack embed.FS
