# Control-plane servers with private addresses only, reached through the bastion: the shape of
# terraform/openstack and of most OpenStack sites. `terraform output -json` of this
# configuration is ../../output-private-only.json.

locals {
  cluster  = "private"
  cp_ips   = ["10.0.1.11", "10.0.1.12", "10.0.1.13"]
  host_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHeagoWhp+qCo6N6quw4QUZuInitGyf+xLCR3ldL1yGx"
}

output "slipway_api" {
  value = {
    endpoint          = "203.0.113.10:6443"
    alternative_names = ["10.0.1.5"]
  }
}

output "slipway_hosts" {
  value = {
    control_plane = {
      cluster_name         = local.cluster
      cloud_provider       = "openstack"
      public_address       = []
      private_address      = local.cp_ips
      hostnames            = [for i, _ in local.cp_ips : "${local.cluster}-cp-${i + 1}"]
      ssh_user             = "ubuntu"
      ssh_port             = 22
      ssh_private_key_file = "/keys/id_ed25519"
      ssh_agent_socket     = ""
      ssh_host_keys        = [for _ in local.cp_ips : local.host_key]
      bastion              = "203.0.113.2"
      bastion_port         = 22
      bastion_user         = "ubuntu"
      bastion_host_key     = local.host_key
      labels               = {}
      taints               = []
    }
  }
}

output "slipway_static_workers" {
  value = {
    edge = {
      public_address       = []
      private_address      = ["10.0.1.21", "10.0.1.22"]
      hostnames            = ["${local.cluster}-edge-1", "${local.cluster}-edge-2"]
      ssh_user             = "ubuntu"
      ssh_private_key_file = "/keys/id_ed25519"
      bastion              = "203.0.113.2"
      bastion_host_key     = local.host_key
    }
  }
}
