variable "cluster_name" {
  description = "Name of the cluster; prefixes every resource and becomes the slipway cluster name."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$", var.cluster_name))
    error_message = "The cluster name must be a lowercase DNS label of at most 32 characters."
  }
}

variable "control_plane_count" {
  description = "Number of control-plane servers: 1, 3 or 5."
  type        = number
  default     = 3

  validation {
    condition     = contains([1, 3, 5], var.control_plane_count)
    error_message = "Use 1, 3 or 5 control-plane servers: etcd needs an odd number."
  }
}

variable "image" {
  description = "Glance image for the bastion and control-plane servers."
  type        = string
  default     = "Ubuntu Noble 24.04"
}

variable "control_plane_flavor" {
  description = "Nova flavor of the control-plane servers (at least 2 vCPUs and 4 GiB)."
  type        = string
  default     = "m1.medium"
}

variable "bastion_flavor" {
  description = "Nova flavor of the bastion."
  type        = string
  default     = "m1.tiny"
}

variable "worker_flavor" {
  description = "Nova flavor of the machine-controller worker pool."
  type        = string
  default     = "m1.medium"
}

variable "worker_replicas" {
  description = "Initial size of the worker pool created by the machine-controller."
  type        = number
  default     = 2
}

variable "ssh_user" {
  description = "Login user of the image."
  type        = string
  default     = "ubuntu"
}

variable "ssh_public_key_file" {
  description = "Public key uploaded as the keypair and authorized on every server."
  type        = string
  default     = "~/.ssh/id_ed25519.pub"
}

variable "ssh_private_key_file" {
  description = "Private key matching ssh_public_key_file; slipway uses it to log in."
  type        = string
  default     = "~/.ssh/id_ed25519"
}

variable "external_network_name" {
  description = "External network for the router, floating IPs and the API load balancer."
  type        = string
  default     = "ext-net"
}

variable "subnet_cidr" {
  description = "CIDR of the cluster subnet. Must not overlap the pod or service subnets."
  type        = string
  default     = "192.168.1.0/24"
}

variable "dns_nameservers" {
  description = "DNS servers of the cluster subnet."
  type        = list(string)
  default     = ["1.1.1.1", "9.9.9.9"]
}

variable "availability_zone" {
  description = "Availability zone of the servers; empty lets Nova choose."
  type        = string
  default     = ""
}

variable "ssh_allowed_cidr" {
  description = "Source CIDR allowed to reach the bastion over SSH."
  type        = string
  default     = "0.0.0.0/0"
}

variable "api_allowed_cidr" {
  description = "Source CIDR allowed to reach the Kubernetes API load balancer."
  type        = string
  default     = "0.0.0.0/0"
}
