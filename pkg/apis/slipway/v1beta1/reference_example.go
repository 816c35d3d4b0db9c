package v1beta1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Example keys used in the reference manifest. They are well-formed but belong to nobody.
const (
	exampleHostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHeagoWhp+qCo6N6quw4QUZuInitGyf+xLCR3ldL1yGx"
	exampleUserKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBoUWRifxFeSrGuG7zU9VBm///6sWYeVhE31Vk0Twe+i ops@example.com"
)

// samples are shown, commented out, for optional blocks that the reference cluster leaves unset.
var samples = map[reflect.Type]any{
	reflect.TypeFor[Bastion]():               Bastion{Address: "bastion2.example.com", Port: 22, User: "ubuntu", PrivateKeyFile: "~/.ssh/bastion", HostPublicKey: exampleHostKey},
	reflect.TypeFor[Canal]():                 Canal{MTU: DefaultCanalMTU},
	reflect.TypeFor[Cilium]():                Cilium{KubeProxyReplacement: true},
	reflect.TypeFor[ExternalCNI]():           ExternalCNI{},
	reflect.TypeFor[NoneCloud]():             NoneCloud{},
	reflect.TypeFor[OpenStackCloud]():        OpenStackCloud{},
	reflect.TypeFor[URLAssets]():             URLAssets{BaseURL: "https://dl.k8s.io/release"},
	reflect.TypeFor[UploadAssets]():          UploadAssets{Directory: "./binaries"},
	reflect.TypeFor[RegistryConfiguration](): RegistryConfiguration{OverwriteRegistry: "registry.example.com", InsecureRegistry: false},
	reflect.TypeFor[RegistryAuth]():          RegistryAuth{Username: "puller", Password: "secret"},
	reflect.TypeFor[Addons]():                Addons{Path: "./addons"},
}

// referenceCluster is the cluster the reference manifest shows: every field set to a typical
// value, with one choice made for each set of alternatives.
func referenceCluster() Cluster {
	maxPods := int32(110)
	conntrack := int32(32768)
	replicas := int32(2)
	disk := int32(50)
	deploy := true
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	host := func(addr, private, name string) Host {
		return Host{
			PublicAddress:     addr,
			PrivateAddress:    private,
			Hostname:          name,
			SSHUsername:       "ubuntu",
			SSHPort:           DefaultSSHPort,
			SSHPrivateKeyFile: "~/.ssh/id_ed25519",
			SSHAgentSocket:    DefaultSSHAgentSocket,
			SSHHostPublicKey:  exampleHostKey,
			Labels:            map[string]string{"topology.kubernetes.io/zone": "az1"},
			Annotations:       map[string]string{"example.com/owner": "platform-team"},
			Kubelet: KubeletConfig{
				SystemReserved: map[string]string{"cpu": "100m", "memory": "256Mi"},
				KubeReserved:   map[string]string{"cpu": "100m", "memory": "256Mi"},
				EvictionHard:   map[string]string{"memory.available": "100Mi"},
				MaxPods:        &maxPods,
			},
		}
	}
	cp := host("203.0.113.10", "10.0.0.10", "cp-1")
	cp.IsLeader = true
	cp.UpgradeIndex = 0
	cp.Taints = []Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: "NoSchedule"}}
	cp.Bastion = &Bastion{Address: "bastion.example.com", Port: 22, User: "ubuntu", PrivateKeyFile: "~/.ssh/id_ed25519", HostPublicKey: exampleHostKey}
	worker := host("203.0.113.20", "10.0.0.20", "worker-1")
	worker.Taints = []Taint{}

	return Cluster{
		APIVersion: APIVersion,
		Kind:       Kind,
		Name:       "example",
		Versions:   Versions{Kubernetes: "v1.36.3"},
		ControlPlane: ControlPlane{
			Hosts: []Host{cp},
		},
		StaticWorkers: StaticWorkers{Hosts: []Host{worker}},
		APIEndpoint:   APIEndpoint{Host: "10.0.0.10", Port: DefaultAPIPort, AlternativeNames: []string{"api.example.com"}},
		ClusterNetwork: ClusterNetwork{
			PodSubnet:         DefaultPodSubnet,
			ServiceSubnet:     DefaultServiceSubnet,
			ServiceDomainName: DefaultServiceDomainName,
			NodePortRange:     DefaultNodePortRange,
			CNI:               CNI{Flannel: &Flannel{Backend: DefaultFlannelBackend}},
			KubeProxy:         KubeProxy{Mode: DefaultKubeProxyMode, ConntrackMaxPerCore: &conntrack},
			UpstreamDNS:       []string{"192.0.2.53"},
		},
		CloudProvider: CloudProvider{OpenStack: &OpenStackCloud{}, External: true},
		ContainerRuntime: ContainerRuntime{Containerd: Containerd{Registries: map[string]ContainerdRegistry{
			"docker.io": {
				Mirrors:   []string{"https://mirror.example.com"},
				TLSConfig: &RegistryTLSConfig{InsecureSkipVerify: false, CAFile: "./mirror-ca.pem"},
			},
		}}},
		Kubelet: KubeletConfig{
			SystemReserved: map[string]string{"cpu": "100m", "memory": "256Mi"},
			EvictionHard:   map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
		},
		Assets:            Assets{Packages: &PackageAssets{BaseURL: DefaultPackagesBaseURL}},
		MachineController: MachineController{Deploy: &deploy, Image: DefaultMachineController + ":v0.1.0", ImageArchive: "slipway-images-v0.1.0.tar"},
		Workers: []WorkerPool{{
			Name:            "pool1",
			Replicas:        &replicas,
			Strategy:        &WorkerStrategy{MaxSurge: &surge, MaxUnavailable: &unavailable},
			MinReadySeconds: 0,
			Autoscaler:      &Autoscaler{Min: 1, Max: 5},
			ProviderSpec: WorkerProviderSpec{
				CloudProviderSpec: OpenStackWorkerSpec{
					Flavor:           "m1.small",
					Image:            "Ubuntu Noble 24.04",
					Network:          "cluster-net",
					Subnet:           "cluster-subnet",
					SecurityGroups:   []string{"cluster-nodes"},
					FloatingIPPool:   "ext-net",
					AvailabilityZone: "az1",
					Region:           "RegionOne",
					ServerGroupID:    "fe9dcd44-f08a-492a-9e64-4e38e1d51573",
					Tags:             map[string]string{"team": "platform"},
					RootDiskSizeGB:   &disk,
					ConfigDrive:      false,
				},
				OperatingSystem:          "ubuntu",
				OperatingSystemSpec:      OperatingSystemSpec{DistUpgradeOnBoot: false},
				SSHPublicKeys:            []string{exampleUserKey},
				Labels:                   map[string]string{"example.com/pool": "pool1"},
				Taints:                   []Taint{{Key: "example.com/dedicated", Value: "batch", Effect: "NoSchedule"}},
				Annotations:              map[string]string{"example.com/owner": "platform-team"},
				MachineObjectAnnotations: map[string]string{"cluster.k8s.io/deletion-policy": "graceful"},
			},
		}},
		Proxy:      Proxy{HTTP: "", HTTPS: "", NoProxy: ""},
		Encryption: Encryption{Enabled: true},
		Etcd: Etcd{Snapshots: &EtcdSnapshots{Schedule: "0 */6 * * *", Retain: 10, S3: &SnapshotS3{
			Endpoint: "https://s3.eu-central-1.amazonaws.com", Bucket: "prod-backups", Folder: "clusters/prod/etcd", Region: "eu-central-1",
		}}},
	}
}
