package kubeadm

import (
	"fmt"
	"reflect"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// KubeletPatchFile is the name of the host's kubelet patch inside PatchesDir: a JSON merge
// patch on the kubeletconfiguration target, which kubeadm applies to the node's own
// /var/lib/kubelet/config.yaml on init, join and upgrade (never to the shared ConfigMap).
const KubeletPatchFile = "kubeletconfiguration+merge.yaml"

// failCgroupV1Minor is the first minor whose kubelet refuses cgroup v1 by default.
const failCgroupV1Minor = 35

// KubeletConfig renders the cluster-wide KubeletConfiguration alone, as kubeadm stores it in
// the kubelet-config ConfigMap. See PatchKubeletConfig to update an existing ConfigMap.
func KubeletConfig(c *v1beta1.Cluster, k KubeletParams) ([]byte, error) {
	cfg, err := kubeletConfig(c, k)
	if err != nil {
		return nil, err
	}
	return marshalDocs(cfg)
}

func kubeletConfig(c *v1beta1.Cluster, k KubeletParams) (kubeletConfiguration, error) {
	cfg := kubeletConfiguration{
		typeMeta:           typeMeta{APIVersion: kubeletAPIVersion, Kind: "KubeletConfiguration"},
		CgroupDriver:       "systemd",
		ServerTLSBootstrap: true,
		ResolvConf:         k.ResolvConf,
		// Cluster-wide settings; each host's own override them through its kubeadm patch.
		SystemReserved: c.Kubelet.SystemReserved,
		KubeReserved:   c.Kubelet.KubeReserved,
		EvictionHard:   c.Kubelet.EvictionHard,
	}
	if c.Kubelet.MaxPods != nil {
		cfg.MaxPods = *c.Kubelet.MaxPods
	}
	fail, err := failCgroupV1(c, k)
	if err != nil {
		return cfg, err
	}
	cfg.FailCgroupV1 = fail
	return cfg, nil
}

// failCgroupV1 is false on cgroup v1 hosts from 1.35 on, and unset otherwise (the kubelet's
// default is right everywhere else).
func failCgroupV1(c *v1beta1.Cluster, k KubeletParams) (*bool, error) {
	v, err := version(c)
	if err != nil {
		return nil, err
	}
	if k.CgroupV1 && v.Minor() >= failCgroupV1Minor {
		f := false
		return &f, nil
	}
	return nil, nil
}

// KubeletPatch renders the host's kubelet settings (maxPods, systemReserved, kubeReserved,
// evictionHard) as a kubeadm patch to write to PatchesDir/KubeletPatchFile before init, join
// or upgrade. ok is false when the host has no such settings; the configurations then name no
// patch directory.
func KubeletPatch(h v1beta1.Host) (data []byte, ok bool, err error) {
	p, ok := kubeletPatch(h)
	if !ok {
		return nil, false, nil
	}
	data, err = marshalDocs(p)
	return data, err == nil, err
}

func kubeletPatch(h v1beta1.Host) (kubeletConfiguration, bool) {
	k := h.Kubelet
	p := kubeletConfiguration{
		SystemReserved: k.SystemReserved,
		KubeReserved:   k.KubeReserved,
		EvictionHard:   k.EvictionHard,
	}
	if k.MaxPods != nil {
		p.MaxPods = *k.MaxPods
	}
	return p, p.MaxPods != 0 || len(p.SystemReserved) > 0 || len(p.KubeReserved) > 0 || len(p.EvictionHard) > 0
}

// PatchKubeletConfig sets the fields slipway owns (cgroupDriver, serverTLSBootstrap,
// resolvConf when given, failCgroupV1) in an existing KubeletConfiguration, such as the
// kubelet-config ConfigMap's "kubelet" key, and keeps every other field. changed is false when
// the document already had those values, so a converged cluster is left alone. Run it with the
// target version before `kubeadm upgrade apply`: kubelets from 1.35 on cgroup v1 hosts need
// failCgroupV1: false in the ConfigMap before kubeadm hands it to them.
func PatchKubeletConfig(existing []byte, c *v1beta1.Cluster, k KubeletParams) (out []byte, changed bool, err error) {
	var doc map[string]any
	if err := yaml.Unmarshal(existing, &doc); err != nil {
		return nil, false, fmt.Errorf("decoding the existing KubeletConfiguration: %w", err)
	}
	if doc == nil {
		return nil, false, fmt.Errorf("the existing KubeletConfiguration is empty")
	}
	if kind, _ := doc["kind"].(string); kind != "KubeletConfiguration" {
		return nil, false, fmt.Errorf("the existing document is a %q, not a KubeletConfiguration", kind)
	}
	want := map[string]any{"cgroupDriver": "systemd", "serverTLSBootstrap": true}
	if k.ResolvConf != "" {
		want["resolvConf"] = k.ResolvConf
	}
	fail, err := failCgroupV1(c, k)
	if err != nil {
		return nil, false, err
	}
	if fail != nil {
		want["failCgroupV1"] = *fail
	}
	for key, v := range want {
		if !reflect.DeepEqual(doc[key], v) {
			doc[key] = v
			changed = true
		}
	}
	if !changed {
		return existing, false, nil
	}
	out, err = yaml.Marshal(doc)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the KubeletConfiguration: %w", err)
	}
	return out, true, nil
}
