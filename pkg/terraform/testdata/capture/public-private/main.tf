# Control-plane servers with a floating IP each (public_address) and a fixed IP on the cluster
# network (private_address). `terraform output -json` of this configuration is
# ../../output-public-private.json.

locals {
  cluster     = "public"
  public_ips  = ["198.51.100.11", "198.51.100.12", "198.51.100.13"]
  private_ips = ["10.0.1.11", "10.0.1.12", "10.0.1.13"]
}

output "slipway_api" {
  value = {
    endpoint          = "198.51.100.10:6443"
    alternative_names = []
  }
}

output "slipway_hosts" {
  value = {
    control_plane = {
      cluster_name         = local.cluster
      cloud_provider       = "openstack"
      public_address       = local.public_ips
      private_address      = local.private_ips
      hostnames            = [for i, _ in local.public_ips : "${local.cluster}-cp-${i + 1}"]
      ssh_user             = "ubuntu"
      ssh_port             = 22
      ssh_private_key_file = "/keys/id_ed25519"
      ssh_agent_socket     = ""
      ssh_host_keys        = []
      bastion              = ""
      bastion_port         = 22
      bastion_user         = ""
      bastion_host_key     = ""
      labels               = {}
      taints               = []
    }
  }
}
