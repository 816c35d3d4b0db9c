# Lists that do not line up with public_address: a private address, and host keys, missing
# (a server whose fixed IP was not known yet, a console that was not read). `terraform output
# -json` of this configuration is ../../output-mismatched.json.

locals {
  host_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHeagoWhp+qCo6N6quw4QUZuInitGyf+xLCR3ldL1yGx"
}

output "slipway_hosts" {
  value = {
    control_plane = {
      cluster_name         = "mismatched"
      public_address       = ["198.51.100.11", "198.51.100.12", "198.51.100.13"]
      private_address      = ["10.0.1.11", "10.0.1.12"]
      hostnames            = ["cp-1", "cp-2", "cp-3"]
      ssh_user             = "ubuntu"
      ssh_private_key_file = "/keys/id_ed25519"
      ssh_host_keys        = [local.host_key]
    }
  }
}
