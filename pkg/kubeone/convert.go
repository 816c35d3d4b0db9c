// Package kubeone converts KubeOne's configuration into slipway's: a KubeOneCluster manifest
// (kubeone.k8c.io/v1beta2 or v1beta3) into a slipway Cluster manifest, and KubeOne's worker
// definitions (dynamicWorkers, and the kubeone_workers Terraform output) into worker pools. Every
// KubeOne field is either mapped to its slipway equivalent or named in a Warning that says why it
// is not (slipway does not support it, or no longer needs it); where slipway's default differs
// from KubeOne's, the KubeOne default is written out and commented. It is pure: it reads bytes
// and returns values.
package kubeone

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/strict"
)

// The KubeOne API versions Convert reads, and its kind.
const (
	GroupVersionV1beta2 = "kubeone.k8c.io/v1beta2"
	GroupVersionV1beta3 = "kubeone.k8c.io/v1beta3"
	Kind                = "KubeOneCluster"
)

// Warning names a KubeOne field that has no slipway equivalent, or that slipway maps differently.
type Warning struct {
	// Path of the KubeOne field, e.g. clusterNetwork.cni.weaveNet.
	Path string `json:"path"`
	// Message says what happened to it and why.
	Message string `json:"message"`
}

func (w Warning) String() string { return w.Path + ": " + w.Message }

// Result is a converted manifest.
type Result struct {
	// Cluster is the slipway manifest, not defaulted.
	Cluster *v1beta1.Cluster
	// Warnings name every KubeOne field that is not carried over as it was, in input order.
	Warnings []Warning
	// comments are remarks to print above manifest fields, by slipway field path.
	comments map[string]string
}

// converter collects what a conversion finds.
type converter struct {
	tf       Terraform
	warnings []Warning
	comments map[string]string
	errs     field.ErrorList
}

func (c *converter) warn(p *field.Path, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{Path: p.String(), Message: fmt.Sprintf(format, args...)})
}

// comment attaches a remark to a slipway field of the output, by path (e.g. clusterNetwork.cni).
func (c *converter) comment(path, text string) {
	if c.comments == nil {
		c.comments = map[string]string{}
	}
	if old, ok := c.comments[path]; ok {
		text = old + "\n" + text
	}
	c.comments[path] = text
}

// Convert reads a KubeOneCluster manifest and returns the slipway manifest that means the same
// cluster with the Terraform output tf says (see Terraform; the zero value for none). Input that
// is not a KubeOneCluster of a supported version, that has fields KubeOne does not know, or that
// asks for what slipway cannot run at all (another cloud, a Kubernetes version outside slipway's
// window, static workers in both the manifest and the Terraform output) is an error naming the
// field.
func Convert(data []byte, tf Terraform) (*Result, error) {
	node, err := strict.Parse(data)
	if err != nil {
		return nil, err
	}
	if node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a KubeOneCluster manifest must be a YAML mapping (apiVersion: ..., kind: KubeOneCluster, ...)", node.Line)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	// The header is read leniently first, so that a manifest of another kind is named as such
	// rather than as a list of unknown fields.
	tree, err := strict.DecodeNode(node, &map[string]any{}, nil)
	if err != nil {
		return nil, err // not a mapping, or duplicate keys: the error says which
	}
	if m, ok := tree.(map[string]any); ok {
		head.APIVersion, _ = m["apiVersion"].(string)
		head.Kind, _ = m["kind"].(string)
	}
	var errs field.ErrorList
	if head.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), head.Kind, []string{Kind}))
	}
	if head.APIVersion != GroupVersionV1beta2 && head.APIVersion != GroupVersionV1beta3 {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), head.APIVersion, []string{GroupVersionV1beta2, GroupVersionV1beta3}))
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	var k cluster
	if _, err := strict.DecodeNode(node, &k, nil); err != nil {
		return nil, err
	}
	cv := &converter{tf: tf}
	out := cv.cluster(&k)
	if len(cv.errs) > 0 {
		return nil, cv.errs.ToAggregate()
	}
	return &Result{Cluster: out, Warnings: cv.warnings, comments: cv.comments}, nil
}

// cluster is the conversion's main flow: one step per part of the KubeOneCluster.
func (c *converter) cluster(k *cluster) *v1beta1.Cluster {
	out := &v1beta1.Cluster{APIVersion: v1beta1.APIVersion, Kind: v1beta1.Kind, Name: k.Name}
	c.versions(k, out)
	c.hosts(k, out)
	c.endpoint(k, out)
	c.network(k, out)
	c.cloud(k, out)
	c.runtime(k, out)
	c.kubeletConfig(k, out)
	out.Proxy = v1beta1.Proxy{HTTP: k.Proxy.HTTP, HTTPS: k.Proxy.HTTPS, NoProxy: k.Proxy.NoProxy}
	c.machineController(k, out)
	for i := range k.DynamicWorkers {
		p := field.NewPath("dynamicWorkers").Index(i)
		pool, warnings, errs := Pool(&k.DynamicWorkers[i], p)
		c.warnings = append(c.warnings, warnings...)
		c.errs = append(c.errs, errs...)
		out.Workers = append(out.Workers, pool)
	}
	c.addons(k, out)
	c.features(k)
	c.rest(k)
	c.terraform(k, out)
	return out
}

func (c *converter) versions(k *cluster, out *v1beta1.Cluster) {
	p := field.NewPath("versions", "kubernetes")
	v := k.Versions.Kubernetes
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	out.Versions.Kubernetes = v
	if _, err := v1beta1.ParseKubernetesVersion(v); err != nil {
		msg := err.Error()
		if errors.Is(err, v1beta1.ErrUnsupportedVersion) {
			msg += ", so upgrade the cluster with KubeOne into that window (one minor at a time) before you migrate"
		}
		c.errs = append(c.errs, field.Invalid(p, k.Versions.Kubernetes, msg))
	}
}

func (c *converter) endpoint(k *cluster, out *v1beta1.Cluster) {
	out.APIEndpoint = v1beta1.APIEndpoint{Host: k.APIEndpoint.Host, Port: k.APIEndpoint.Port, AlternativeNames: slices.Clone(k.APIEndpoint.AlternativeNames)}
}

func (c *converter) machineController(k *cluster, out *v1beta1.Cluster) {
	if k.MachineController == nil {
		return
	}
	d := k.MachineController.Deploy
	out.MachineController.Deploy = &d
	if d {
		c.comment("machineController", "KubeOne deployed Kubermatic's machine-controller; slipway deploys its own, which reads the same\n"+
			"cluster.k8s.io/v1alpha1 MachineDeployments.")
	}
}

func (c *converter) kubeletConfig(k *cluster, out *v1beta1.Cluster) {
	if k.KubeletConfig != nil {
		out.Kubelet = c.kubelet(k.KubeletConfig, field.NewPath("kubeletConfig"))
	}
}

// kubelet maps a KubeletConfig; settings slipway's kubelet section does not have are warned.
func (c *converter) kubelet(k *kubelet, p *field.Path) v1beta1.KubeletConfig {
	if k.PodPidsLimit != nil {
		c.warn(p.Child("podPidsLimit"), "not supported: slipway does not set the kubelet's podPidsLimit; the kubelet's default applies")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"imageGCHighThresholdPercent", k.ImageGCHighThresholdPercent != nil}, {"imageGCLowThresholdPercent", k.ImageGCLowThresholdPercent != nil},
		{"imageMinimumGCAge", k.ImageMinimumGCAge != ""}, {"imageMaximumGCAge", k.ImageMaximumGCAge != ""},
	} {
		if f.set {
			c.warn(p.Child(f.name), "not supported: slipway does not set the kubelet's image garbage collection; the kubelet's default applies")
		}
	}
	return v1beta1.KubeletConfig{SystemReserved: k.SystemReserved, KubeReserved: k.KubeReserved, EvictionHard: k.EvictionHard, MaxPods: k.MaxPods}
}
