package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Where apply writes the node settings and the machine-controller reads them.
const (
	SettingsNamespace = "kube-system"
	SettingsSecret    = "machine-controller-node-settings"
	SettingsKey       = "settings.json"
)

// Settings are the cluster-wide half of a new node's setup: what the manifest says about
// containerd (its release, registries, mirrors, TLS and credentials), the proxy, the asset
// source of kubelet and kubeadm, the cluster network and the cloud provider. apply writes them
// into the cluster as the Secret SettingsNamespace/SettingsSecret (they may hold registry
// credentials); the machine-controller reads them each time it renders a Machine's user-data,
// so a change to the manifest reaches the next machine without restarting the controller.
// Machines that exist keep the setup they booted with.
type Settings struct {
	// Cluster is the loaded (defaulted) manifest cut down by SettingsFor to what shapes a node.
	Cluster v1beta1.Cluster `json:"cluster"`
	// RegistryCAs are the PEM contents of each registry's tlsConfig.caFile, by registry name,
	// read on the operator's machine: the controller cannot read the operator's files.
	RegistryCAs map[string][]byte `json:"registryCAs,omitempty"`
	// CNIPods select the pods the CNI runs on every node (the DaemonSet of the manifest's CNI):
	// the controller lifts a new Node's not-ready taint once the Node is Ready and its pod there
	// runs and is ready. Unset for an external CNI, whose Nodes lose the taint once Ready.
	CNIPods *PodSelector `json:"cniPods,omitempty"`
}

// PodSelector names pods by namespace and label selector (as kubectl -l takes it).
type PodSelector struct {
	Namespace string `json:"namespace"`
	Selector  string `json:"selector"`
}

// SettingsFor cuts the loaded manifest c down to what the node scripts read. Hosts keep only
// their addresses (the proxy's NO_PROXY names them); SSH settings, bastions, labels, taints,
// pools and add-ons stay out. cas are the registries' CA files, by registry name.
func SettingsFor(c *v1beta1.Cluster, cas map[string][]byte) Settings {
	addresses := func(hosts []v1beta1.Host) []v1beta1.Host {
		var out []v1beta1.Host
		for _, h := range hosts {
			out = append(out, v1beta1.Host{PublicAddress: h.PublicAddress, PrivateAddress: h.PrivateAddress})
		}
		return out
	}
	s := Settings{
		Cluster: v1beta1.Cluster{
			APIVersion:            c.APIVersion,
			Kind:                  c.Kind,
			Name:                  c.Name,
			Versions:              c.Versions,
			ControlPlane:          v1beta1.ControlPlane{Hosts: addresses(c.ControlPlane.Hosts)},
			StaticWorkers:         v1beta1.StaticWorkers{Hosts: addresses(c.StaticWorkers.Hosts)},
			APIEndpoint:           c.APIEndpoint,
			ClusterNetwork:        c.ClusterNetwork,
			CloudProvider:         v1beta1.CloudProvider{External: c.CloudProvider.External},
			Kubelet:               v1beta1.KubeletConfig{AllowCgroupV1: c.Kubelet.AllowCgroupV1},
			ContainerRuntime:      c.ContainerRuntime,
			RegistryConfiguration: c.RegistryConfiguration,
			Assets:                c.Assets,
			Proxy:                 c.Proxy,
		},
	}
	if len(cas) > 0 {
		s.RegistryCAs = map[string][]byte{}
		for k, v := range cas {
			s.RegistryCAs[k] = v
		}
	}
	return s
}

// Marshal encodes s for the Secret's SettingsKey.
func (s Settings) Marshal() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the node settings: %w", err)
	}
	return b, nil
}

// ParseSettings decodes what Marshal encoded. Unknown fields are an error: a controller older
// than the slipway that wrote them would otherwise drop settings without a word.
func ParseSettings(data []byte) (Settings, error) {
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("decoding %s/%s %s (written by slipway apply): %w", SettingsNamespace, SettingsSecret, SettingsKey, err)
	}
	if s.Cluster.Versions.Kubernetes == "" {
		return Settings{}, fmt.Errorf("%s/%s %s names no Kubernetes version: it was not written by slipway apply", SettingsNamespace, SettingsSecret, SettingsKey)
	}
	return s, nil
}
