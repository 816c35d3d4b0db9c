package v1beta1

// CloudProvider names the infrastructure; set exactly one of openstack or none.
type CloudProvider struct {
	// OpenStack: the cluster runs on OpenStack. Credentials are read from the usual OS_*
	// environment variables when slipway runs (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD,
	// OS_USER_DOMAIN_NAME or OS_DOMAIN_NAME, OS_PROJECT_NAME or OS_PROJECT_ID,
	// OS_PROJECT_DOMAIN_NAME, OS_REGION_NAME, OS_CACERT, or OS_APPLICATION_CREDENTIAL_ID and
	// OS_APPLICATION_CREDENTIAL_SECRET) and stored in Secrets for the machine-controller and the
	// cloud-controller-manager; they never appear in the manifest, in `config dump` or in a plan.
	// OpenStack requires external: true.
	OpenStack *OpenStackCloud `json:"openstack,omitempty"`
	// None: bare metal or any machines without a cloud integration. Workers cannot be used.
	None *NoneCloud `json:"none,omitempty"`
	// External runs the provider's out-of-tree cloud-controller-manager, and every kubelet with
	// --cloud-provider=external: a new Node stays tainted
	// node.cloudprovider.kubernetes.io/uninitialized until the cloud-controller-manager has set
	// its provider ID, addresses and zone labels. Kubernetes no longer ships an in-tree
	// OpenStack provider, so openstack without external: true is refused, not defaulted: an
	// existing cluster's kubelets would change how they register. With openstack, apply deploys
	// the OpenStack cloud-controller-manager (the image `make image` builds,
	// registry.k8s.io/provider-os/openstack-cloud-controller-manager, under
	// registryConfiguration.overwriteRegistry when that is set) as a DaemonSet on the control
	// planes in kube-system, with its cloud.conf in the Secret
	// openstack-cloud-controller-manager-config built from the same OS_* credentials as the
	// machine-controller's. Not allowed with none.
	External bool `json:"external,omitempty"`
	// CloudConfig is reserved for the provider's cloud.conf and must be empty: a value here is
	// refused rather than ignored. The OpenStack cloud-controller-manager gets its cloud.conf
	// from the same OS_* credentials as the machine-controller, never from the manifest.
	CloudConfig string `json:"cloudConfig,omitempty"`
}

// OpenStackCloud holds OpenStack-wide settings.
type OpenStackCloud struct{}

// NoneCloud means no cloud provider.
type NoneCloud struct{}

// MachineController configures the machine-controller deployment.
type MachineController struct {
	// Deploy the machine-controller. Default: true with a cloud provider other than none.
	Deploy *bool `json:"deploy,omitempty"`
	// Image of the machine-controller. Default: ghcr.io/slipway-dev/machine-controller tagged
	// with slipway's version (the image `make image` builds from the same commit), under
	// registryConfiguration.overwriteRegistry when that is set. An image set here is used as
	// written.
	Image string `json:"image,omitempty"`
	// ImageArchive is an image archive on this machine for sites without a registry: the
	// slipway-images-<version>.tar that `make image` writes (an OCI layout tar that is also a
	// `docker save` archive), holding the machine-controller image under the name Image says and
	// the OpenStack cloud-controller-manager's. apply uploads it to every control plane and runs
	// `ctr -n k8s.io images import` there, on new control planes and whenever the archive
	// changes, and skips hosts whose containerd already has every image it holds; the images are
	// pinned against the kubelet's image garbage collection (containerd 1.7 and later), and the
	// machine-controller then runs on control planes only. A relative path is relative to the
	// manifest.
	ImageArchive string `json:"imageArchive,omitempty"`
}

// WorkerPool is one group of identical cloud machines.
type WorkerPool struct {
	// Name of the pool: a DNS-1123 label, unique among pools. It names the MachineDeployment.
	Name string `json:"name"`
	// Replicas is how many machines the pool runs.
	Replicas *int32 `json:"replicas,omitempty"`
	// Strategy bounds rolling updates.
	Strategy *WorkerStrategy `json:"strategy,omitempty"`
	// MinReadySeconds is how long a new machine's node must be Ready before it counts as
	// available during a rollout. Default: 0.
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
	// Autoscaler sets bounds for the cluster-autoscaler. Replicas must lie within them.
	Autoscaler *Autoscaler `json:"autoscaler,omitempty"`
	// ProviderSpec describes the machines.
	ProviderSpec WorkerProviderSpec `json:"providerSpec"`
}

// WorkerStrategy bounds a rolling update.
type WorkerStrategy struct {
	// MaxSurge is how many machines may be created above replicas during an update: a number or
	// a percentage of replicas (rounded up). Default: 1.
	MaxSurge *IntOrString `json:"maxSurge,omitempty"`
	// MaxUnavailable is how many machines may be unavailable during an update: a number or a
	// percentage of replicas (rounded down). Default: 0. MaxSurge and MaxUnavailable cannot both
	// be 0.
	MaxUnavailable *IntOrString `json:"maxUnavailable,omitempty"`
}

// Autoscaler bounds a pool for the cluster-autoscaler.
type Autoscaler struct {
	// Min replicas.
	Min int32 `json:"min"`
	// Max replicas.
	Max int32 `json:"max"`
}

// WorkerProviderSpec describes the machines of a pool.
type WorkerProviderSpec struct {
	// CloudProviderSpec are the cloud settings of each machine.
	CloudProviderSpec OpenStackWorkerSpec `json:"cloudProviderSpec"`
	// OperatingSystem of each machine: ubuntu or debian, the operating systems whose user-data
	// slipway renders and tests. Validation, config machinedeployments and the
	// machine-controller's admission webhook refuse any other value, flatcar, rhel and rockylinux
	// included, naming this list: their boot is not implemented yet.
	OperatingSystem string `json:"operatingSystem"`
	// OperatingSystemSpec holds OS-specific settings.
	OperatingSystemSpec OperatingSystemSpec `json:"operatingSystemSpec,omitzero"`
	// SSHPublicKeys are authorized for the machine's default user.
	SSHPublicKeys []string `json:"sshPublicKeys,omitempty"`
	// Labels are added to each machine's Node.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are added to each machine's Node.
	Taints []Taint `json:"taints,omitempty"`
	// Annotations are added to each machine's Node.
	Annotations map[string]string `json:"annotations,omitempty"`
	// MachineObjectAnnotations are added to each Machine object (not the Node), for example
	// cluster-autoscaler or slipway deletion settings.
	MachineObjectAnnotations map[string]string `json:"machineObjectAnnotations,omitempty"`
}

// OperatingSystemSpec holds OS-specific settings.
type OperatingSystemSpec struct {
	// DistUpgradeOnBoot upgrades all packages on first boot.
	DistUpgradeOnBoot bool `json:"distUpgradeOnBoot"`
	// DisableAutoUpdate turns off automatic OS updates on Flatcar. Flatcar is not supported yet,
	// so it has no effect; it is accepted for manifests migrated from KubeOne.
	DisableAutoUpdate bool `json:"disableAutoUpdate,omitempty"`
}

// OpenStackWorkerSpec are the OpenStack settings of a worker machine. Names and IDs are both
// accepted wherever a resource is referenced.
type OpenStackWorkerSpec struct {
	// Flavor name or ID, e.g. m1.small.
	Flavor string `json:"flavor"`
	// Image name or ID, e.g. "Ubuntu Noble 24.04".
	Image string `json:"image"`
	// Network name or ID the machine's port is created on.
	Network string `json:"network,omitempty"`
	// Subnet name or ID the machine's fixed IP comes from.
	Subnet string `json:"subnet,omitempty"`
	// SecurityGroups names or IDs applied to the machine's port.
	SecurityGroups []string `json:"securityGroups,omitempty"`
	// FloatingIPPool is the external network to allocate a floating IP from; empty means none.
	FloatingIPPool string `json:"floatingIpPool,omitempty"`
	// AvailabilityZone to create the machine in.
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// Region of the cloud to create the machine in: it picks the endpoints of the
	// machine-controller's own Keystone catalog, used with its own credentials; a region the
	// catalog does not have fails the Machine with the catalog's regions named. Default: the
	// controller's OS_REGION_NAME.
	Region string `json:"region,omitempty"`
	// ServerGroupID of a server group (for anti-affinity), passed as a scheduler hint.
	ServerGroupID string `json:"serverGroupID,omitempty"`
	// Tags are added to the server's metadata.
	Tags map[string]string `json:"tags,omitempty"`
	// RootDiskSizeGB boots from a Cinder volume of this size instead of the flavor's disk.
	RootDiskSizeGB *int32 `json:"rootDiskSizeGB,omitempty"`
	// ConfigDrive passes user-data on a config drive instead of the metadata service.
	ConfigDrive bool `json:"configDrive,omitempty"`
}
