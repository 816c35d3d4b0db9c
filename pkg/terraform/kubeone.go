package terraform

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kubeone"
	"github.com/slipway-dev/slipway/pkg/strict"
)

// KubeOne's Terraform outputs, which slipway reads as KubeOne does when a Terraform
// configuration made for KubeOne has no slipway_* outputs.
const (
	KubeOneAPI           = "kubeone_api"
	KubeOneHosts         = "kubeone_hosts"
	KubeOneStaticWorkers = "kubeone_static_workers"
	KubeOneWorkers       = "kubeone_workers"
)

func isKubeOneOutput(name string) bool {
	return name == KubeOneAPI || name == KubeOneHosts || name == KubeOneStaticWorkers || name == KubeOneWorkers
}

// kubeOneDocument is the part of `terraform output -json` that KubeOne reads, with the fields
// its example configurations (examples/terraform/*/output.tf) write.
type kubeOneDocument struct {
	API           *envelope[*kubeOneAPI]                      `json:"kubeone_api,omitempty"`
	Hosts         *envelope[*kubeOneHosts]                    `json:"kubeone_hosts,omitempty"`
	StaticWorkers *envelope[map[string]kubeOneHostGroup]      `json:"kubeone_static_workers,omitempty"`
	Workers       *envelope[map[string]kubeone.DynamicWorker] `json:"kubeone_workers,omitempty"`
}

type kubeOneAPI struct {
	Endpoint         string   `json:"endpoint"`
	AlternativeNames []string `json:"apiserver_alternative_names,omitempty"`
}

type kubeOneHosts struct {
	ControlPlane *kubeOneHostGroup `json:"control_plane"`
}

// kubeOneHostGroup is a KubeOne host group: kubeone_hosts.control_plane (which alone has the
// cluster-wide fields) or a group of kubeone_static_workers.
type kubeOneHostGroup struct {
	ClusterName       string            `json:"cluster_name,omitempty"`
	CloudProvider     string            `json:"cloud_provider,omitempty"`
	LeaderIP          string            `json:"leader_ip,omitempty"`
	Untaint           bool              `json:"untaint,omitempty"`
	NetworkID         string            `json:"network_id,omitempty"`
	VAppName          string            `json:"vapp_name,omitempty"`
	StorageProfile    string            `json:"storage_profile,omitempty"`
	PublicAddress     []string          `json:"public_address,omitempty"`
	IPv6Addresses     [][]string        `json:"ipv6_addresses,omitempty"`
	PrivateAddress    []string          `json:"private_address,omitempty"`
	Hostnames         []string          `json:"hostnames,omitempty"`
	OperatingSystem   string            `json:"operating_system,omitempty"`
	SSHUser           string            `json:"ssh_user,omitempty"`
	SSHPort           int               `json:"ssh_port,omitempty"`
	SSHPrivateKeyFile string            `json:"ssh_private_key_file,omitempty"`
	SSHCertFile       string            `json:"ssh_cert_file,omitempty"`
	SSHAgentSocket    string            `json:"ssh_agent_socket,omitempty"`
	SSHHostKeys       []string          `json:"ssh_hosts_keys,omitempty"`
	Bastion           string            `json:"bastion,omitempty"`
	BastionPort       int               `json:"bastion_port,omitempty"`
	BastionUser       string            `json:"bastion_user,omitempty"`
	BastionHostKey    string            `json:"bastion_host_key,omitempty"`
	Kubelet           *kubeOneKubelet   `json:"kubelet,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// kubeOneKubelet are kubelet settings as KubeOne's outputs write them: "cpu=200m,memory=200Mi",
// and eviction thresholds as "memory.available<100Mi,nodefs.available<10%".
type kubeOneKubelet struct {
	SystemReserved string `json:"system_reserved,omitempty"`
	KubeReserved   string `json:"kube_reserved,omitempty"`
	EvictionHard   string `json:"eviction_hard,omitempty"`
	MaxPods        *int32 `json:"max_pods,omitempty"`
}

// kubeOneExtras is what a KubeOne host group sets beyond slipway's HostGroup.
type kubeOneExtras struct {
	leaderIP    string
	untaint     bool
	annotations map[string]string
	kubelet     v1beta1.KubeletConfig
}

// check refuses a leader_ip that names none of the group's hosts (KubeOne would silently run
// without a leader it was told of).
func (x *kubeOneExtras) check(g *HostGroup, p *field.Path) field.ErrorList {
	if x == nil || x.leaderIP == "" {
		return nil
	}
	if slices.Contains(g.PublicAddress, x.leaderIP) || slices.Contains(g.PrivateAddress, x.leaderIP) {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("leader_ip"), x.leaderIP, "is none of the group's public_address or private_address entries")}
}

func (x *kubeOneExtras) apply(h *v1beta1.Host, public, private string) {
	if x == nil {
		return
	}
	h.IsLeader = x.leaderIP != "" && (x.leaderIP == public || x.leaderIP == private)
	if x.untaint {
		h.Taints = []v1beta1.Taint{}
	}
	h.Annotations = maps.Clone(x.annotations)
	h.Kubelet = x.kubelet
	h.Kubelet.SystemReserved = maps.Clone(x.kubelet.SystemReserved)
	h.Kubelet.KubeReserved = maps.Clone(x.kubelet.KubeReserved)
	h.Kubelet.EvictionHard = maps.Clone(x.kubelet.EvictionHard)
}

// parseKubeOne reads KubeOne's outputs into slipway's Output, so that they merge by the same
// rules, with errors naming KubeOne's outputs.
func parseKubeOne(node *yaml.Node) (*Output, error) {
	var doc kubeOneDocument
	if _, err := strict.DecodeNode(node, &doc, nil); err != nil {
		return nil, err
	}
	out := &Output{StaticWorkers: map[string]HostGroup{}, Workers: map[string]WorkerPool{}, workerTrees: map[string]map[string]any{},
		names: outputNames{KubeOneAPI, KubeOneHosts, KubeOneStaticWorkers, KubeOneWorkers}}
	var errs field.ErrorList
	if doc.API != nil && doc.API.Value != nil {
		out.API = &API{Endpoint: doc.API.Value.Endpoint, AlternativeNames: doc.API.Value.AlternativeNames}
	}
	if doc.Hosts != nil && doc.Hosts.Value != nil && doc.Hosts.Value.ControlPlane != nil {
		g, e := out.kubeOneGroup(doc.Hosts.Value.ControlPlane, field.NewPath(KubeOneHosts, "value", "control_plane"), true)
		out.ControlPlane = &g
		errs = append(errs, e...)
	}
	if doc.StaticWorkers != nil {
		for _, name := range slices.Sorted(maps.Keys(doc.StaticWorkers.Value)) {
			kg := doc.StaticWorkers.Value[name]
			g, e := out.kubeOneGroup(&kg, field.NewPath(KubeOneStaticWorkers, "value").Key(name), false)
			out.StaticWorkers[name] = g
			errs = append(errs, e...)
		}
	}
	if doc.Workers != nil {
		for _, name := range slices.Sorted(maps.Keys(doc.Workers.Value)) {
			w := doc.Workers.Value[name]
			w.Name = name
			pool, warnings, e := kubeone.Pool(&w, field.NewPath(KubeOneWorkers, "value").Key(name))
			errs = append(errs, e...)
			for _, wr := range warnings {
				out.Warnings = append(out.Warnings, wr.String())
			}
			tree, err := poolTree(pool)
			if err != nil {
				return nil, err
			}
			out.Workers[name] = WorkerPool{Replicas: pool.Replicas, ProviderSpec: pool.ProviderSpec}
			out.workerTrees[name] = tree
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}

// poolTree is a converted pool as a generic tree without its name, the form in which Merge lays
// the manifest's pool over Terraform's.
func poolTree(pool v1beta1.WorkerPool) (map[string]any, error) {
	raw, err := json.Marshal(pool)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	delete(tree, "name")
	return tree, nil
}

// kubeOneGroup converts one KubeOne host group. Fields slipway has no use for are warned about;
// those only KubeOne's other clouds read (network_id, vapp_name, storage_profile) too.
func (o *Output) kubeOneGroup(k *kubeOneHostGroup, p *field.Path, controlPlane bool) (HostGroup, field.ErrorList) {
	var errs field.ErrorList
	g := HostGroup{
		PublicAddress:     k.PublicAddress,
		PrivateAddress:    k.PrivateAddress,
		Hostnames:         k.Hostnames,
		SSHUser:           k.SSHUser,
		SSHPort:           k.SSHPort,
		SSHPrivateKeyFile: k.SSHPrivateKeyFile,
		SSHAgentSocket:    k.SSHAgentSocket,
		Bastion:           k.Bastion,
		BastionPort:       k.BastionPort,
		BastionUser:       k.BastionUser,
		Labels:            k.Labels,
		kubeone:           &kubeOneExtras{leaderIP: k.LeaderIP, untaint: k.Untaint, annotations: k.Annotations},
	}
	for i, key := range k.SSHHostKeys {
		s, err := kubeone.HostKey(key)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("ssh_hosts_keys").Index(i), key, err.Error()))
		}
		g.SSHHostKeys = append(g.SSHHostKeys, s)
	}
	if s, err := kubeone.HostKey(k.BastionHostKey); err != nil {
		errs = append(errs, field.Invalid(p.Child("bastion_host_key"), k.BastionHostKey, err.Error()))
	} else {
		g.BastionHostKey = s
	}
	if k.Kubelet != nil {
		kp := p.Child("kubelet")
		var e field.ErrorList
		kc := &g.kubeone.kubelet
		kc.SystemReserved, e = pairs(k.Kubelet.SystemReserved, "=", kp.Child("system_reserved"))
		errs = append(errs, e...)
		kc.KubeReserved, e = pairs(k.Kubelet.KubeReserved, "=", kp.Child("kube_reserved"))
		errs = append(errs, e...)
		kc.EvictionHard, e = pairs(k.Kubelet.EvictionHard, "<", kp.Child("eviction_hard"))
		errs = append(errs, e...)
		kc.MaxPods = k.Kubelet.MaxPods
	}
	if controlPlane {
		g.ClusterName, g.CloudProvider = k.ClusterName, k.CloudProvider
	} else {
		for _, f := range []struct{ name, value string }{{"cluster_name", k.ClusterName}, {"cloud_provider", k.CloudProvider}, {"leader_ip", k.LeaderIP}} {
			if f.value != "" {
				errs = append(errs, field.Forbidden(p.Child(f.name), "only "+KubeOneHosts+".value.control_plane has it"))
			}
		}
		if k.Untaint {
			errs = append(errs, field.Forbidden(p.Child("untaint"), "only "+KubeOneHosts+".value.control_plane has it (workers have no taints unless given)"))
		}
	}
	warn := func(name, why string) { o.Warnings = append(o.Warnings, fmt.Sprintf("%s: %s", p.Child(name), why)) }
	if k.OperatingSystem != "" {
		warn("operating_system", "ignored: slipway reads the operating system from each host")
	}
	for _, a := range k.IPv6Addresses {
		if len(a) > 0 {
			warn("ipv6_addresses", "ignored: slipway runs single-stack IPv4 clusters")
			break
		}
	}
	if k.SSHCertFile != "" && k.SSHCertFile != k.SSHPrivateKeyFile+"-cert.pub" {
		warn("ssh_cert_file", "ignored: slipway uses the certificate at <ssh_private_key_file>-cert.pub; put "+k.SSHCertFile+" there")
	}
	for _, f := range []struct{ name, value string }{{"network_id", k.NetworkID}, {"vapp_name", k.VAppName}, {"storage_profile", k.StorageProfile}} {
		if f.value != "" {
			warn(f.name, "ignored: KubeOne reads it only on Hetzner or VMware Cloud Director, which slipway does not run on")
		}
	}
	return g, errs
}

// pairs parses "k=v,k2=v2" (sep "=") or "k<v,k2<v2" (sep "<"), KubeOne's form of kubelet maps.
// An entry without sep is an error naming it, where KubeOne would skip it silently.
func pairs(s, sep string, p *field.Path) (map[string]string, field.ErrorList) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[string]string{}
	var errs field.ErrorList
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), sep)
		if !ok || k == "" {
			errs = append(errs, field.Invalid(p, s, fmt.Sprintf("entry %q is not name%svalue", kv, sep)))
			continue
		}
		m[k] = v
	}
	return m, errs
}

// ForKubeOne is what o says that KubeOne prefers to a KubeOneCluster manifest's own values
// (see kubeone.Terraform), for converting the manifest that goes with it.
func (o *Output) ForKubeOne() kubeone.Terraform {
	var tf kubeone.Terraform
	if o == nil {
		return tf
	}
	if cp := o.ControlPlane; cp != nil {
		tf.ClusterName, tf.CloudProvider, tf.ControlPlaneHosts = cp.ClusterName, cp.CloudProvider, cp.hasAddresses()
	}
	if o.API != nil {
		tf.Endpoint, tf.AlternativeNames = o.API.Endpoint, len(o.API.AlternativeNames) > 0
	}
	tf.StaticWorkerHosts = o.staticWorkerHosts()
	return tf
}
