terraform {
  required_version = ">= 1.5.0"

  required_providers {
    openstack = {
      source  = "terraform-provider-openstack/openstack"
      version = "~> 3.0"
    }
  }
}

# Credentials come from the usual OS_* environment variables (or clouds.yaml via OS_CLOUD).
provider "openstack" {}
