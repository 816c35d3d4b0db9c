# Private addresses only, with one hostname too few: hostnames must line up with
# private_address. `terraform output -json` of this configuration is
# ../../output-private-mismatched.json.

output "slipway_hosts" {
  value = {
    control_plane = {
      cluster_name         = "private-mismatched"
      public_address       = []
      private_address      = ["10.0.1.11", "10.0.1.12", "10.0.1.13"]
      hostnames            = ["cp-1", "cp-2"]
      ssh_user             = "ubuntu"
      ssh_private_key_file = "/keys/id_ed25519"
      bastion              = "203.0.113.2"
    }
  }
}
