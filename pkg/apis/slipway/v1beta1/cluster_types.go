package v1beta1

// APIVersion and Kind identify a slipway manifest.
const (
	APIVersion = "slipway.dev/v1beta1"
	Kind       = "Cluster"
)

// Cluster describes one Kubernetes cluster: where its hosts are, which Kubernetes it runs, how
// its network, container runtime and cloud are set up, and which worker pools the
// machine-controller manages.
type Cluster struct {
	// APIVersion of the manifest. Must be slipway.dev/v1beta1.
	APIVersion string `json:"apiVersion"`
	// Kind of the manifest. Must be Cluster.
	Kind string `json:"kind"`

	// Name of the cluster: a DNS-1123 label. It names the kubeconfig file, tags cloud servers and
	// keys slipway's per-cluster known_hosts. It may instead come from the Terraform output
	// (cluster_name); when both are set they must agree.
	Name string `json:"name"`

	// Versions of the cluster's components.
	Versions Versions `json:"versions"`

	// ControlPlane lists the hosts that run the API server, controller manager, scheduler and a
	// stacked etcd member. Usually supplied by the Terraform output instead.
	ControlPlane ControlPlane `json:"controlPlane,omitzero"`

	// StaticWorkers lists worker hosts that slipway joins over SSH (as opposed to workers the
	// machine-controller creates from Workers). Usually supplied by the Terraform output.
	StaticWorkers StaticWorkers `json:"staticWorkers,omitzero"`

	// APIEndpoint is where clients and nodes reach the Kubernetes API: a load balancer for highly
	// available control planes. Usually supplied by the Terraform output.
	APIEndpoint APIEndpoint `json:"apiEndpoint,omitzero"`

	// ClusterNetwork sets the pod and service networks, the CNI plugin and kube-proxy.
	ClusterNetwork ClusterNetwork `json:"clusterNetwork,omitzero"`

	// CloudProvider names the infrastructure the cluster runs on. Exactly one of openstack or none.
	// Default: none.
	CloudProvider CloudProvider `json:"cloudProvider,omitzero"`

	// ContainerRuntime configures containerd on every host.
	ContainerRuntime ContainerRuntime `json:"containerRuntime,omitzero"`

	// Kubelet holds kubelet settings for every host. A host's own kubelet settings override them
	// key by key. They take effect when a host joins; changing them later does not yet
	// reconfigure running nodes.
	Kubelet KubeletConfig `json:"kubelet,omitzero"`

	// RegistryConfiguration rewrites where all system images (control plane, CNI,
	// machine-controller) are pulled from, for sites that mirror every image into one registry.
	RegistryConfiguration *RegistryConfiguration `json:"registryConfiguration,omitempty"`

	// Assets says where the Kubernetes binaries (kubeadm, kubelet, kubectl) come from. Exactly one
	// of packages, url or upload. Default: packages from https://pkgs.k8s.io.
	Assets Assets `json:"assets,omitzero"`

	// MachineController configures the in-cluster controller that creates worker machines.
	MachineController MachineController `json:"machineController,omitzero"`

	// Workers are pools of cloud machines that the machine-controller creates and keeps at the
	// requested size. Each pool becomes one MachineDeployment in kube-system. Pools may also come
	// from the Terraform output; any field set here wins over Terraform's value.
	Workers []WorkerPool `json:"workers,omitempty"`

	// Proxy is the HTTP proxy that hosts use to reach package repositories and registries.
	Proxy Proxy `json:"proxy,omitzero"`

	// Addons are your own manifests, applied after the cluster and its CNI are up, and pruned
	// when they leave the folder.
	Addons *Addons `json:"addons,omitempty"`

	// Encryption encrypts Secrets at rest, in etcd and so in its snapshots and backups.
	Encryption Encryption `json:"encryption,omitzero"`

	// Etcd configures what slipway does for the control planes' stacked etcd.
	Etcd Etcd `json:"etcd,omitzero"`
}

// Etcd configures what slipway does for the stacked etcd.
type Etcd struct {
	// Snapshots, when set, has every control plane take an etcd snapshot on a schedule (a
	// systemd timer) into /var/lib/slipway/etcd-snapshots, root-only, and keep the newest few.
	// slipway status shows each control plane's newest snapshot and counts a failed run as a
	// problem. slipway reset keeps the snapshots. Removing the field stops the timer and keeps
	// the snapshots taken.
	Snapshots *EtcdSnapshots `json:"snapshots,omitempty"`
}

// EtcdSnapshots schedules etcd snapshots on the control planes.
type EtcdSnapshots struct {
	// Schedule is a cron expression of five fields (minute, hour, day of month, month, day of
	// week; numbers, *, ranges a-b, steps /n and lists), in UTC. Day of month and day of week
	// cannot both be restricted. Default: "0 */12 * * *", every twelve hours, as RKE2 does.
	Schedule string `json:"schedule,omitempty"`
	// Retain is how many snapshots each control plane keeps: after each snapshot, the oldest
	// beyond this number are deleted. Default: 5.
	Retain int `json:"retain,omitempty"`
	// S3, when set, uploads each snapshot and its .sha256 to an S3-compatible object store
	// after it is taken, and keeps the newest Retain of each control plane's there too. Only
	// keys named exactly as slipway names that control plane's snapshots under the folder count
	// and are deleted, and never one the control plane still keeps: other objects in the bucket
	// are left alone and cannot push real snapshots out.
	S3 *SnapshotS3 `json:"s3,omitempty"`
}

// SnapshotS3 is an S3-compatible object store (AWS S3, MinIO, Ceph RGW, ...) that scheduled
// snapshots are uploaded to, with path-style requests (<endpoint>/<bucket>/<key>) signed with AWS
// Signature Version 4 by curl on the control planes. The access key comes from the environment
// of slipway apply (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), never from the manifest, and is
// written to the control planes only, root-only.
type SnapshotS3 struct {
	// Endpoint is the store's URL: scheme and host, e.g. https://s3.eu-central-1.amazonaws.com.
	// It must be https unless insecure is set.
	Endpoint string `json:"endpoint"`
	// Bucket is the bucket the snapshots go to; it must exist.
	Bucket string `json:"bucket"`
	// Folder is a key prefix, e.g. prod/etcd: the snapshots are <folder>/<node>-<UTC time>.db.
	// Default: none, the bucket's top level.
	Folder string `json:"folder,omitempty"`
	// Region is the region requests are signed for. Default: us-east-1.
	Region string `json:"region,omitempty"`
	// CAFile is a local PEM file of CA certificates to trust for an https:// Endpoint; slipway
	// copies it to the control planes.
	CAFile string `json:"caFile,omitempty"`
	// Insecure allows an http:// Endpoint, e.g. http://10.0.0.5:9000. The snapshots then cross
	// the network unencrypted, and they hold every Secret of the cluster; anyone on the path can
	// also read, replace or delete them (the signatures cover the requests, not their secrecy):
	// use it only on a network you trust. It does not turn off certificate checks of an https
	// Endpoint (trust a private CA with caFile). Default: false.
	Insecure bool `json:"insecure,omitempty"`
}

// Encryption configures the encryption of Secrets at rest.
type Encryption struct {
	// Enabled makes every API server encrypt Secrets with aescbc before they reach etcd, with a
	// 32-byte random key that slipway makes on the leader and keeps on the control planes only
	// (/etc/kubernetes/encryption/config.yaml, root-only): it is never written to this machine,
	// so an etcd snapshot or backup is useless without a control plane's copy. Enabling it on a
	// running cluster restarts the API servers one at a time and then rewrites every Secret, so
	// that those written before are encrypted too. slipway apply --rotate-encryption-key
	// replaces the key without downtime. Turning it off again is refused. Default: false.
	Enabled bool `json:"enabled,omitempty"`
}

// Versions pins component versions.
type Versions struct {
	// Kubernetes version of the control plane and static workers, e.g. v1.36.3. slipway supports
	// the minors v1.35, v1.36 and v1.37. Raising it and running apply upgrades the cluster, one
	// minor at a time.
	Kubernetes string `json:"kubernetes"`
}

// ControlPlane is the set of control-plane hosts.
type ControlPlane struct {
	// Hosts of the control plane. Use an odd number (1, 3 or 5): etcd needs a majority to work.
	Hosts []Host `json:"hosts,omitempty"`
}

// StaticWorkers is the set of worker hosts joined over SSH.
type StaticWorkers struct {
	// Hosts to join as workers.
	Hosts []Host `json:"hosts,omitempty"`
}

// APIEndpoint is the address of the Kubernetes API.
type APIEndpoint struct {
	// Host is a DNS name or IP address. Default: the private address of the only control-plane
	// host; required when there are several.
	Host string `json:"host,omitempty"`
	// Port of the API. Default: 6443.
	Port int `json:"port,omitempty"`
	// AlternativeNames are extra DNS names or IPs added to the API server certificate.
	AlternativeNames []string `json:"alternativeNames,omitempty"`
}

// Proxy configures an HTTP proxy for hosts.
type Proxy struct {
	// HTTP proxy URL, e.g. http://proxy.example.com:3128.
	HTTP string `json:"http,omitempty"`
	// HTTPS proxy URL.
	HTTPS string `json:"https,omitempty"`
	// NoProxy is a comma-separated list of hosts and CIDRs reached directly. slipway adds the
	// pod and service subnets, the cluster domain and every host address itself.
	NoProxy string `json:"noProxy,omitempty"`
}

// Addons are your own manifests, kept in the cluster as the folder says.
type Addons struct {
	// Path to a directory of YAML manifests, relative to the manifest file. Every *.yaml and
	// *.yml file in it and its subdirectories (in path order; names starting with a dot are
	// skipped) is rendered as a Go template (text/template, its built-in functions only) over
	// these values:
	//   {{ .ClusterName }}        the cluster's name
	//   {{ .KubernetesVersion }}  versions.kubernetes, e.g. v1.36.3
	//   {{ .PodSubnet }}          clusterNetwork.podSubnet
	//   {{ .ServiceSubnet }}      clusterNetwork.serviceSubnet
	//   {{ .ServiceDomain }}      clusterNetwork.serviceDomainName
	//   {{ .APIEndpoint }}        the API endpoint as host:port
	//   {{ .APIHost }}            its host
	//   {{ .APIPort }}            its port
	// (write {{"{{"}} for a literal "{{"), and each YAML document (separated by lines of
	// ---) is one object. apply applies them with server-side apply, as slipway, after the CNI
	// (step addons), each labelled addons.slipway.dev/set: <cluster name> and annotated with
	// its file; an object that was applied before and has left the folder is deleted (pruned);
	// the plan lists the objects it adds, changes and prunes. A file that does not parse or
	// render stops apply before it reaches a host, naming the file and line; on a running
	// cluster every object is first checked by a server-side dry run (step addons-dry-run),
	// which stops apply before anything changes. Removing addons.path leaves the objects
	// applied before in place (the plan warns); point it at an empty folder to prune them all.
	Path string `json:"path"`
}
