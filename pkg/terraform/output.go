// Package terraform reads the user's Terraform output (a `terraform output -json` file, stdin, or
// a Terraform directory run through terraform-exec), checks it strictly against slipway's output
// contract, and merges it into a cluster manifest: Terraform supplies hosts and the API endpoint,
// and the manifest wins for any worker-pool field it sets.
package terraform

import (
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Names of the Terraform outputs slipway reads. Other outputs are ignored.
const (
	OutputAPI           = "slipway_api"
	OutputHosts         = "slipway_hosts"
	OutputStaticWorkers = "slipway_static_workers"
	OutputWorkers       = "slipway_workers"
)

// Output is slipway's Terraform output contract.
type Output struct {
	// API is slipway_api.
	API *API
	// ControlPlane is slipway_hosts.control_plane.
	ControlPlane *HostGroup
	// StaticWorkers is slipway_static_workers: groups of worker hosts by name.
	StaticWorkers map[string]HostGroup
	// Workers is slipway_workers: machine-controller worker pools by name.
	Workers map[string]WorkerPool
	// workerTrees keeps each pool as Terraform wrote it, for field-wise merging.
	workerTrees map[string]map[string]any
	// Warnings name what the output sets that slipway does not use (KubeOne's outputs only).
	Warnings []string
	// names are the outputs' names, which errors use: slipway's, or KubeOne's.
	names outputNames
}

// outputNames are the names of the four outputs.
type outputNames struct{ api, hosts, staticWorkers, workers string }

// outputs returns the names of the outputs o was read from.
func (o *Output) outputs() outputNames {
	if o.names.api == "" {
		return outputNames{OutputAPI, OutputHosts, OutputStaticWorkers, OutputWorkers}
	}
	return o.names
}

// API is the slipway_api output.
type API struct {
	// Endpoint is the API load balancer: a DNS name or IP, optionally with :port.
	Endpoint string `json:"endpoint"`
	// AlternativeNames are extra names for the API server certificate.
	AlternativeNames []string `json:"alternative_names,omitempty"`
}

// Hosts is the slipway_hosts output.
type Hosts struct {
	ControlPlane *HostGroup `json:"control_plane"`
}

// HostGroup describes a group of hosts that share SSH settings. Its lists are indexed by host:
// there are as many hosts as public addresses or, when public_address is empty (hosts that
// have private addresses only and are reached through the bastion), as private addresses, and
// every other list is either empty or has exactly one entry per host. See hosts for how each
// list is used.
type HostGroup struct {
	ClusterName       string            `json:"cluster_name,omitempty"`
	CloudProvider     string            `json:"cloud_provider,omitempty"`
	PublicAddress     []string          `json:"public_address"`
	PrivateAddress    []string          `json:"private_address,omitempty"`
	Hostnames         []string          `json:"hostnames,omitempty"`
	SSHUser           string            `json:"ssh_user,omitempty"`
	SSHPort           int               `json:"ssh_port,omitempty"`
	SSHPrivateKeyFile string            `json:"ssh_private_key_file,omitempty"`
	SSHAgentSocket    string            `json:"ssh_agent_socket,omitempty"`
	SSHHostKeys       []string          `json:"ssh_host_keys,omitempty"`
	Bastion           string            `json:"bastion,omitempty"`
	BastionPort       int               `json:"bastion_port,omitempty"`
	BastionUser       string            `json:"bastion_user,omitempty"`
	BastionHostKey    string            `json:"bastion_host_key,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Taints            []v1beta1.Taint   `json:"taints,omitempty"`
	// kubeone holds what KubeOne's host groups have beyond slipway's contract.
	kubeone *kubeOneExtras
}

// WorkerPool is one entry of slipway_workers. ProviderSpec has the manifest's
// workers[].providerSpec shape.
type WorkerPool struct {
	Replicas     *int32                     `json:"replicas,omitempty"`
	ProviderSpec v1beta1.WorkerProviderSpec `json:"providerSpec"`
}

// envelope is one output as `terraform output -json` prints it.
type envelope[T any] struct {
	Sensitive bool `json:"sensitive"`
	Type      any  `json:"type"`
	Value     T    `json:"value"`
}

// document is the part of `terraform output -json` that slipway reads.
type document struct {
	API           *envelope[*API]                  `json:"slipway_api,omitempty"`
	Hosts         *envelope[*Hosts]                `json:"slipway_hosts,omitempty"`
	StaticWorkers *envelope[map[string]HostGroup]  `json:"slipway_static_workers,omitempty"`
	Workers       *envelope[map[string]WorkerPool] `json:"slipway_workers,omitempty"`
}
