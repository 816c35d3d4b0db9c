package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Options tune the reconcilers. The zero value of a field means its default (see Defaults).
// Setup applies the defaults and hands each controller the fields it uses (machine.Options,
// machineset.Options, machinedeployment.Options, health.Options, orphans.Options).
type Options struct {
	// Namespace restricts the controllers to the cluster.k8s.io objects of one namespace; empty
	// means all namespaces.
	Namespace string
	// ClusterName is the cluster's name for people to read, passed to the cloud provider; servers
	// are owned, and swept, by the cluster UID (see SECURITY.md).
	ClusterName string
	// Workers is the number of concurrent reconciles per controller.
	Workers int
	// JoinTimeout is how long a Machine may exist without a Node before it is replaced.
	JoinTimeout time.Duration
	// UnhealthyTimeout is how long a Node may stay NotReady before its Machine is replaced.
	UnhealthyTimeout time.Duration
	// DrainTimeout is how long a graceful deletion evicts pods before it gives up and goes on.
	DrainTimeout time.Duration
	// ForcedDeleteTimeout is how long a forced deletion waits for the cloud before it releases
	// the Machine and records the server as a leftover for the orphan sweep.
	ForcedDeleteTimeout time.Duration
	// MaxUnhealthy caps health-based replacements per MachineDeployment (an absolute number or a
	// percentage of its replicas, rounded up, at least 1). When more Machines are unhealthy than
	// this, none is replaced: that many failures at once point at the cluster or the cloud, and
	// replacing would make it worse (Cluster API's MachineHealthCheck short-circuit).
	MaxUnhealthy intstr.IntOrString
	// OvershootThreshold is how many Machines a MachineSet may have above its replicas before it
	// is frozen.
	OvershootThreshold int
	// PollInterval is how often slow cloud operations (a server building or being deleted) and
	// blocked drains are checked again.
	PollInterval time.Duration
	// ProbeInterval is how often the API server's /readyz is asked; health-based replacement
	// freezes after three answers in a row that are not "ok".
	ProbeInterval time.Duration
	// CapacityRetryMax is the longest wait between two attempts to create a server the cloud
	// refused for quota or capacity. The wait starts at PollInterval and doubles up to it.
	CapacityRetryMax time.Duration
	// OrphanSweepInterval is how often servers without a Machine are looked for; 0 uses the
	// default and a negative value disables the sweep.
	OrphanSweepInterval time.Duration
	// OrphanGracePeriod is how long a server must have been seen without a Machine before the
	// sweep deletes it, so that creates still in flight are never swept.
	OrphanGracePeriod time.Duration
	// LeftoverNamespace holds the ConfigMap that records servers left behind by forced deletions.
	LeftoverNamespace string
	// Join says how new Machines find the cluster; see JoinOptions.
	Join JoinOptions
}

// JoinOptions say where new Machines join. Endpoint and CACertHash come from the flags when set,
// otherwise from the cluster-info ConfigMap in kube-public that kubeadm publishes (its kubeconfig
// names the API server and carries the cluster CA, whose public-key hash kubeadm join pins).
// Everything else a new Machine is set up with (the manifest's containerd, registries, proxy and
// asset source, and whether a cloud-controller-manager initializes Nodes) comes from the node
// settings that apply writes into the cluster (bootstrap.SettingsSecret), read each time a
// Machine's user-data is rendered.
type JoinOptions struct {
	// Endpoint is the API server's host:port.
	Endpoint string
	// CACertHash is "sha256:<hex>" of the cluster CA's public key.
	CACertHash string
}

// Defaults returns o with every zero field set to its default.
func (o Options) Defaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Workers <= 0 {
		o.Workers = 10
	}
	def(&o.JoinTimeout, 15*time.Minute)
	def(&o.UnhealthyTimeout, 10*time.Minute)
	def(&o.DrainTimeout, 15*time.Minute)
	def(&o.ForcedDeleteTimeout, 2*time.Minute)
	def(&o.PollInterval, 5*time.Second)
	def(&o.CapacityRetryMax, 30*time.Second)
	def(&o.ProbeInterval, 10*time.Second)
	def(&o.OrphanSweepInterval, 5*time.Minute)
	def(&o.OrphanGracePeriod, 10*time.Minute)
	if o.MaxUnhealthy.Type == intstr.Int && o.MaxUnhealthy.IntVal == 0 {
		o.MaxUnhealthy = intstr.FromString("40%")
	}
	if o.OvershootThreshold <= 0 {
		o.OvershootThreshold = 1
	}
	if o.LeftoverNamespace == "" {
		o.LeftoverNamespace = "kube-system"
	}
	if o.ClusterName == "" {
		o.ClusterName = "slipway"
	}
	return o
}
