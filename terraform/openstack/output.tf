# These outputs implement slipway's Terraform output contract (see the slipway README).
# `slipway apply -t .` runs `terraform output -json` here and reads them.

output "slipway_api" {
  description = "Kubernetes API endpoint: the load balancer's floating IP."
  value = {
    endpoint          = "${openstack_networking_floatingip_v2.api.address}:6443"
    alternative_names = [openstack_lb_loadbalancer_v2.api.vip_address]
  }
}

output "slipway_hosts" {
  description = "Control-plane hosts: private addresses only, reached over SSH through the bastion."
  value = {
    control_plane = {
      cluster_name         = var.cluster_name
      cloud_provider       = "openstack"
      public_address       = []
      private_address      = openstack_compute_instance_v2.control_plane[*].access_ip_v4
      hostnames            = openstack_compute_instance_v2.control_plane[*].name
      ssh_user             = var.ssh_user
      ssh_port             = 22
      ssh_private_key_file = var.ssh_private_key_file
      ssh_agent_socket     = "env:SSH_AUTH_SOCK"
      ssh_host_keys        = []
      bastion              = openstack_networking_floatingip_v2.bastion.address
      bastion_port         = 22
      bastion_user         = var.ssh_user
      bastion_host_key     = ""
      labels               = {}
      taints               = []
    }
  }
}

# The pool's name is the MachineDeployment's (in kube-system) and the one the manifest's
# workers[].name matches (examples/openstack.yaml sets pool1's flavor). Its servers carry the
# cluster's name and UID in their metadata, set by the machine-controller, which refuses tags
# with those keys (slipway-cluster, slipway-cluster-uid, machine-uid): `slipway config
# machinedeployments` checks the pool as the controller will.
output "slipway_workers" {
  description = "Worker pools created by the machine-controller. The manifest wins for any field it sets."
  value = {
    pool1 = {
      replicas = var.worker_replicas
      providerSpec = {
        cloudProviderSpec = {
          flavor           = var.worker_flavor
          image            = var.image
          network          = openstack_networking_network_v2.cluster.name
          subnet           = openstack_networking_subnet_v2.cluster.name
          securityGroups   = [openstack_networking_secgroup_v2.nodes.name]
          availabilityZone = var.availability_zone
        }
        operatingSystem     = "ubuntu"
        operatingSystemSpec = { distUpgradeOnBoot = false }
        sshPublicKeys       = [trimspace(file(pathexpand(var.ssh_public_key_file)))]
      }
    }
  }
}
