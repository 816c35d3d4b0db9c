# A control plane whose servers are not there (count = 0, or a splat over nothing): no
# addresses in either list. `terraform output -json` of this configuration is
# ../../output-no-hosts.json.

output "slipway_hosts" {
  value = {
    control_plane = {
      cluster_name         = "no-hosts"
      public_address       = []
      private_address      = []
      hostnames            = []
      ssh_user             = "ubuntu"
      ssh_private_key_file = "/keys/id_ed25519"
      bastion              = "203.0.113.2"
    }
  }
}
