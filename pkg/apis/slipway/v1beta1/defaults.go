package v1beta1

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Default values. They are documented on the fields they apply to.
const (
	DefaultSSHPort           = 22
	DefaultSSHUsername       = "root"
	DefaultSSHAgentSocket    = "env:SSH_AUTH_SOCK"
	DefaultAPIPort           = 6443
	DefaultPodSubnet         = "10.244.0.0/16"
	DefaultServiceSubnet     = "10.96.0.0/12"
	DefaultServiceDomainName = "cluster.local"
	DefaultNodePortRange     = "30000-32767"
	DefaultKubeProxyMode     = "iptables"
	DefaultFlannelBackend    = "vxlan"
	DefaultCanalMTU          = 1450
	DefaultPackagesBaseURL   = "https://pkgs.k8s.io"
	// DefaultContainerdReleaseURL is where containerd publishes its release tarballs.
	DefaultContainerdReleaseURL = "https://github.com/containerd/containerd/releases/download"
	DefaultMachineController    = "ghcr.io/slipway-dev/machine-controller"
	DefaultSnapshotSchedule     = "0 */12 * * *"
	DefaultSnapshotS3Region     = "us-east-1"
	DefaultSnapshotRetain       = 5
)

// SetDefaults fills every unset field that has a default. imageTag is the machine-controller
// image tag to use by default (slipway's own version). It is idempotent.
func SetDefaults(c *Cluster, imageTag string) {
	for i := range c.ControlPlane.Hosts {
		defaultHost(&c.ControlPlane.Hosts[i])
	}
	for i := range c.StaticWorkers.Hosts {
		defaultHost(&c.StaticWorkers.Hosts[i])
	}
	if s := c.Etcd.Snapshots; s != nil {
		s.Schedule = or(s.Schedule, DefaultSnapshotSchedule)
		if s.Retain == 0 {
			s.Retain = DefaultSnapshotRetain
		}
		if s.S3 != nil {
			s.S3.Region = or(s.S3.Region, DefaultSnapshotS3Region)
		}
	}
	leader := false
	for _, h := range c.ControlPlane.Hosts {
		leader = leader || h.IsLeader
	}
	if !leader && len(c.ControlPlane.Hosts) > 0 {
		c.ControlPlane.Hosts[0].IsLeader = true
	}

	if c.APIEndpoint.Port == 0 {
		c.APIEndpoint.Port = DefaultAPIPort
	}
	if c.APIEndpoint.Host == "" && len(c.ControlPlane.Hosts) == 1 {
		c.APIEndpoint.Host = c.ControlPlane.Hosts[0].PrivateAddress
	}

	n := &c.ClusterNetwork
	n.PodSubnet = or(n.PodSubnet, DefaultPodSubnet)
	n.ServiceSubnet = or(n.ServiceSubnet, DefaultServiceSubnet)
	n.ServiceDomainName = or(n.ServiceDomainName, DefaultServiceDomainName)
	n.NodePortRange = or(n.NodePortRange, DefaultNodePortRange)
	n.KubeProxy.Mode = or(n.KubeProxy.Mode, DefaultKubeProxyMode)
	if n.CNI == (CNI{}) {
		n.CNI.Flannel = &Flannel{}
	}
	if n.CNI.Flannel != nil {
		n.CNI.Flannel.Backend = or(n.CNI.Flannel.Backend, DefaultFlannelBackend)
	}
	if n.CNI.Canal != nil && n.CNI.Canal.MTU == 0 {
		n.CNI.Canal.MTU = DefaultCanalMTU
	}

	if c.CloudProvider.OpenStack == nil && c.CloudProvider.None == nil {
		c.CloudProvider.None = &NoneCloud{}
	}
	if c.Assets == (Assets{}) {
		c.Assets.Packages = &PackageAssets{}
	}
	if c.Assets.Packages != nil {
		c.Assets.Packages.BaseURL = strings.TrimSuffix(or(c.Assets.Packages.BaseURL, DefaultPackagesBaseURL), "/")
	}
	if c.Assets.URL != nil {
		c.Assets.URL.BaseURL = strings.TrimSuffix(c.Assets.URL.BaseURL, "/")
	}
	rel := &c.ContainerRuntime.Containerd.Release
	rel.BaseURL = strings.TrimSuffix(or(rel.BaseURL, DefaultContainerdReleaseURL), "/")

	mc := &c.MachineController
	if mc.Deploy == nil {
		deploy := c.CloudProvider.None == nil
		mc.Deploy = &deploy
	}
	if mc.Image == "" {
		// The default follows overwriteRegistry like every system image; an image the manifest
		// names is used as written.
		mc.Image = c.RegistryConfiguration.machineControllerImage(imageTag)
	}

	for i := range c.Workers {
		defaultWorker(&c.Workers[i])
	}
}

func defaultHost(h *Host) {
	h.PrivateAddress = or(h.PrivateAddress, h.PublicAddress)
	h.SSHUsername = or(h.SSHUsername, DefaultSSHUsername)
	if h.SSHPort == 0 {
		h.SSHPort = DefaultSSHPort
	}
	h.SSHAgentSocket = or(h.SSHAgentSocket, DefaultSSHAgentSocket)
	for b := h.Bastion; b != nil; b = b.Bastion {
		if b.Port == 0 {
			b.Port = DefaultSSHPort
		}
		b.User = or(b.User, h.SSHUsername)
		b.PrivateKeyFile = or(b.PrivateKeyFile, h.SSHPrivateKeyFile)
	}
}

func defaultWorker(w *WorkerPool) {
	if w.Replicas == nil {
		one := int32(1)
		w.Replicas = &one
	}
	if w.Strategy == nil {
		w.Strategy = &WorkerStrategy{}
	}
	if w.Strategy.MaxSurge == nil {
		s := intstr.FromInt32(1)
		w.Strategy.MaxSurge = &s
	}
	if w.Strategy.MaxUnavailable == nil {
		u := intstr.FromInt32(0)
		w.Strategy.MaxUnavailable = &u
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
