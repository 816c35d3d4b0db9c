package sandboxapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// State is what up records in the state directory's state.json, and what e2e tests read.
type State struct {
	// Name is the sandbox name, the value of every object's dev.slipway.sandbox label.
	Name    string `json:"name"`
	Network string `json:"network"`
	Subnet  string `json:"subnet"`
	// Image is the node image the hosts run.
	Image string `json:"image"`
	// Privileged says whether hosts run --privileged (see canSetResources).
	Privileged bool `json:"privileged"`
	// CgroupV1 says whether the hosts run on cgroup v1 (see CgroupV1).
	CgroupV1 bool   `json:"cgroupV1"`
	Assets   Assets `json:"assets"`
	// Versions are the Kubernetes versions served; Kubernetes is the one in slipway.yaml.
	Versions   []string `json:"versions"`
	Kubernetes string   `json:"kubernetes"`
	Hosts      []Host   `json:"hosts"`
	// Endpoint is the API endpoint, host:port: the load balancer's, or else the first control plane's.
	Endpoint string `json:"endpoint"`
	// Pool, when set, is a worker pool that slipway.yaml asks for (see Pool).
	Pool *Pool `json:"pool,omitempty"`
}

// Pool is a worker pool of OpenStack servers in slipway.yaml: with it the manifest names the
// OpenStack cloud provider (external) and one pool whose servers sit on the Neutron network
// Network. The sandbox starts no cloud: the one that apply's OS_* variables point at (the
// simulator with --provider-network Network=<the sandbox's Docker network>, as `make demo` runs
// it) must boot its servers on the sandbox network, so that they reach the API endpoint and the
// assets as the hosts do.
type Pool struct {
	Network  string `json:"network"`
	Replicas int    `json:"replicas"`
}

// Assets says where the assets container serves what, as seen from the sandbox network and
// from the machine running the sandbox alike.
type Assets struct {
	IP string `json:"ip"`
	// Registry mirrors registry.k8s.io: http://<ip>:5000.
	Registry string `json:"registry"`
	// Files is the file server's root: http://<ip>:8080. Under it:
	//   /release/<version>/bin/linux/amd64/{kubeadm,kubelet,kubectl}[.sha256]  like dl.k8s.io/release
	//   /core:/stable:/<minor>/deb/                                            like pkgs.k8s.io
	//   /cri-tools/releases/download/<v>/crictl-<v>-linux-amd64.tar.gz[.sha256] like GitHub
	//   /containerd/releases/download/v<v>/containerd-<v>-linux-amd64.tar.gz[.sha256sum] like GitHub
	Files string `json:"files"`
	// ResolvConf is a file on every host naming a non-loopback DNS server, for the kubelet's
	// resolvConf: Docker's own /etc/resolv.conf says 127.0.0.11, on which CoreDNS would loop.
	ResolvConf string `json:"resolvConf"`
}

// ContainerdReleasePath is where, under Assets.Files, containerd's release tarballs are served:
// <path>/v<version>/containerd-<version>-linux-amd64.tar.gz and its .sha256sum, like GitHub.
const ContainerdReleasePath = "/containerd/releases/download"

// ContainerdReleases is the base URL of containerd's release tarballs on the assets host, for the
// manifest's containerRuntime.containerd.release.baseURL.
func (a Assets) ContainerdReleases() string { return a.Files + ContainerdReleasePath }

// Files in the state directory.
const (
	StateFile      = "state.json"
	KeyFile        = "id_ed25519"
	KnownHostsFile = "known_hosts"
	TFOutputFile   = "tf.json"
	ManifestFile   = "slipway.yaml"
)

// Sandbox is a sandbox's state plus where it is kept.
type Sandbox struct {
	State
	// Dir is the state directory.
	Dir string `json:"-"`
	// mu serializes changes to Hosts and the state files (AddHost, RemoveHost, Recreate may run
	// concurrently, for instance when a simulated cloud boots several servers).
	mu sync.Mutex
}

// Open reads the state of the sandbox that up wrote into dir.
func Open(dir string) (*Sandbox, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(abs, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no sandbox in %s: run up first", abs)
	}
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{Dir: abs}
	if err := json.Unmarshal(data, &sb.State); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(abs, StateFile), err)
	}
	return sb, nil
}

// Path returns the absolute path of a file in the state directory.
func (sb *Sandbox) Path(name string) string { return filepath.Join(sb.Dir, name) }

// Host returns the named host.
func (sb *Sandbox) Host(name string) (Host, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.host(name)
}

func (sb *Sandbox) host(name string) (Host, bool) {
	for _, h := range sb.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return Host{}, false
}

// HostsWith returns the hosts of one role, in order.
func (sb *Sandbox) HostsWith(role Role) []Host {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.hostsWith(role)
}

func (sb *Sandbox) hostsWith(role Role) []Host {
	var hs []Host
	for _, h := range sb.Hosts {
		if h.Role == role {
			hs = append(hs, h)
		}
	}
	return hs
}

func (sb *Sandbox) save() error {
	data, err := json.MarshalIndent(sb.State, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(sb.Path(StateFile), append(data, '\n'), 0o644)
}

// writeFile replaces a file atomically, so that a reader never sees half of it.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
