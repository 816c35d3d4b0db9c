locals {
  common_tags = ["slipway", "slipway-cluster=${var.cluster_name}"]
}

data "openstack_networking_network_v2" "external" {
  name     = var.external_network_name
  external = true
}

resource "openstack_compute_keypair_v2" "deployer" {
  name       = "${var.cluster_name}-deployer"
  public_key = file(pathexpand(var.ssh_public_key_file))
}

# --- Network -----------------------------------------------------------------------------------

resource "openstack_networking_network_v2" "cluster" {
  name           = "${var.cluster_name}-net"
  admin_state_up = true
  tags           = local.common_tags
}

resource "openstack_networking_subnet_v2" "cluster" {
  name            = "${var.cluster_name}-subnet"
  network_id      = openstack_networking_network_v2.cluster.id
  cidr            = var.subnet_cidr
  ip_version      = 4
  dns_nameservers = var.dns_nameservers
  tags            = local.common_tags
}

resource "openstack_networking_router_v2" "cluster" {
  name                = "${var.cluster_name}-router"
  external_network_id = data.openstack_networking_network_v2.external.id
  tags                = local.common_tags
}

resource "openstack_networking_router_interface_v2" "cluster" {
  router_id = openstack_networking_router_v2.cluster.id
  subnet_id = openstack_networking_subnet_v2.cluster.id
}

# --- Security groups ---------------------------------------------------------------------------

# Every cluster node: all traffic between nodes, SSH from the bastion.
resource "openstack_networking_secgroup_v2" "nodes" {
  name        = "${var.cluster_name}-nodes"
  description = "Kubernetes nodes of ${var.cluster_name}"
  tags        = local.common_tags
}

resource "openstack_networking_secgroup_rule_v2" "nodes_internal_ipv4" {
  direction         = "ingress"
  ethertype         = "IPv4"
  remote_group_id   = openstack_networking_secgroup_v2.nodes.id
  security_group_id = openstack_networking_secgroup_v2.nodes.id
}

resource "openstack_networking_secgroup_rule_v2" "nodes_ssh_from_bastion" {
  direction         = "ingress"
  ethertype         = "IPv4"
  protocol          = "tcp"
  port_range_min    = 22
  port_range_max    = 22
  remote_group_id   = openstack_networking_secgroup_v2.bastion.id
  security_group_id = openstack_networking_secgroup_v2.nodes.id
}

resource "openstack_networking_secgroup_rule_v2" "nodes_api_from_subnet" {
  description       = "Kubernetes API, reached through the load balancer"
  direction         = "ingress"
  ethertype         = "IPv4"
  protocol          = "tcp"
  port_range_min    = 6443
  port_range_max    = 6443
  remote_ip_prefix  = var.subnet_cidr
  security_group_id = openstack_networking_secgroup_v2.nodes.id
}

resource "openstack_networking_secgroup_rule_v2" "nodes_nodeports" {
  description       = "NodePort services"
  direction         = "ingress"
  ethertype         = "IPv4"
  protocol          = "tcp"
  port_range_min    = 30000
  port_range_max    = 32767
  remote_ip_prefix  = var.subnet_cidr
  security_group_id = openstack_networking_secgroup_v2.nodes.id
}

resource "openstack_networking_secgroup_v2" "bastion" {
  name        = "${var.cluster_name}-bastion"
  description = "SSH bastion of ${var.cluster_name}"
  tags        = local.common_tags
}

resource "openstack_networking_secgroup_rule_v2" "bastion_ssh" {
  direction         = "ingress"
  ethertype         = "IPv4"
  protocol          = "tcp"
  port_range_min    = 22
  port_range_max    = 22
  remote_ip_prefix  = var.ssh_allowed_cidr
  security_group_id = openstack_networking_secgroup_v2.bastion.id
}

# --- Bastion -----------------------------------------------------------------------------------

resource "openstack_networking_port_v2" "bastion" {
  name               = "${var.cluster_name}-bastion"
  network_id         = openstack_networking_network_v2.cluster.id
  security_group_ids = [openstack_networking_secgroup_v2.bastion.id]

  fixed_ip {
    subnet_id = openstack_networking_subnet_v2.cluster.id
  }
}

resource "openstack_compute_instance_v2" "bastion" {
  name              = "${var.cluster_name}-bastion"
  image_name        = var.image
  flavor_name       = var.bastion_flavor
  key_pair          = openstack_compute_keypair_v2.deployer.name
  availability_zone = var.availability_zone != "" ? var.availability_zone : null
  tags              = local.common_tags

  network {
    port = openstack_networking_port_v2.bastion.id
  }
}

resource "openstack_networking_floatingip_v2" "bastion" {
  pool = var.external_network_name
}

resource "openstack_networking_floatingip_associate_v2" "bastion" {
  floating_ip = openstack_networking_floatingip_v2.bastion.address
  port_id     = openstack_networking_port_v2.bastion.id
  depends_on  = [openstack_networking_router_interface_v2.cluster]
}

# --- Control plane -----------------------------------------------------------------------------

# Anti-affinity keeps etcd members on different hypervisors, so one host failure costs one member.
resource "openstack_compute_servergroup_v2" "control_plane" {
  name     = "${var.cluster_name}-control-plane"
  policies = ["anti-affinity"]
}

resource "openstack_networking_port_v2" "control_plane" {
  count              = var.control_plane_count
  name               = "${var.cluster_name}-cp-${count.index + 1}"
  network_id         = openstack_networking_network_v2.cluster.id
  security_group_ids = [openstack_networking_secgroup_v2.nodes.id]

  fixed_ip {
    subnet_id = openstack_networking_subnet_v2.cluster.id
  }
}

resource "openstack_compute_instance_v2" "control_plane" {
  count             = var.control_plane_count
  name              = "${var.cluster_name}-cp-${count.index + 1}"
  image_name        = var.image
  flavor_name       = var.control_plane_flavor
  key_pair          = openstack_compute_keypair_v2.deployer.name
  availability_zone = var.availability_zone != "" ? var.availability_zone : null
  tags              = local.common_tags

  scheduler_hints {
    group = openstack_compute_servergroup_v2.control_plane.id
  }

  network {
    port = openstack_networking_port_v2.control_plane[count.index].id
  }
}

# --- API load balancer (Octavia) ---------------------------------------------------------------

resource "openstack_lb_loadbalancer_v2" "api" {
  name          = "${var.cluster_name}-api"
  vip_subnet_id = openstack_networking_subnet_v2.cluster.id
  tags          = local.common_tags
}

resource "openstack_lb_listener_v2" "api" {
  name            = "${var.cluster_name}-api"
  protocol        = "TCP"
  protocol_port   = 6443
  loadbalancer_id = openstack_lb_loadbalancer_v2.api.id
  allowed_cidrs   = [var.api_allowed_cidr]
}

resource "openstack_lb_pool_v2" "api" {
  name        = "${var.cluster_name}-api"
  protocol    = "TCP"
  lb_method   = "ROUND_ROBIN"
  listener_id = openstack_lb_listener_v2.api.id
}

# The health check asks the API server itself whether it is ready, so a member whose etcd is
# being replaced during an upgrade leaves the pool instead of failing requests.
resource "openstack_lb_monitor_v2" "api" {
  pool_id        = openstack_lb_pool_v2.api.id
  type           = "HTTPS"
  url_path       = "/readyz"
  expected_codes = "200"
  delay          = 5
  timeout        = 3
  max_retries    = 2
}

resource "openstack_lb_member_v2" "api" {
  count         = var.control_plane_count
  pool_id       = openstack_lb_pool_v2.api.id
  address       = openstack_compute_instance_v2.control_plane[count.index].access_ip_v4
  protocol_port = 6443
  subnet_id     = openstack_networking_subnet_v2.cluster.id
}

resource "openstack_networking_floatingip_v2" "api" {
  pool    = var.external_network_name
  port_id = openstack_lb_loadbalancer_v2.api.vip_port_id
}
