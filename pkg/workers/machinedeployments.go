// Package workers turns the manifest's worker pools into the MachineDeployment objects
// (cluster.k8s.io/v1alpha1) that the machine-controller reconciles. It is a pure function of the
// cluster description, so `slipway config machinedeployments` shows exactly what apply creates.
package workers

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/yamlfmt"
)

// Namespace is where MachineDeployments live.
const Namespace = "kube-system"

// PoolLabel selects the Machines of a pool.
const PoolLabel = "workerset"

// Annotations cluster-autoscaler's cluster-api provider reads for node-group bounds.
const (
	AutoscalerMinAnnotation = v1alpha1.AutoscalerMinSizeAnnotation
	AutoscalerMaxAnnotation = v1alpha1.AutoscalerMaxSizeAnnotation
)

// providerConfig is providerSpec.value, with its fields in the order users are used to.
type providerConfig struct {
	CloudProvider       string                      `json:"cloudProvider"`
	CloudProviderSpec   v1beta1.OpenStackWorkerSpec `json:"cloudProviderSpec"`
	OperatingSystem     string                      `json:"operatingSystem"`
	OperatingSystemSpec v1beta1.OperatingSystemSpec `json:"operatingSystemSpec"`
	SSHPublicKeys       []string                    `json:"sshPublicKeys,omitempty"`
}

// MachineDeployments returns one MachineDeployment per worker pool of a defaulted, valid cluster.
func MachineDeployments(c *v1beta1.Cluster) ([]*v1alpha1.MachineDeployment, error) {
	cloud := "openstack"
	if c.CloudProvider.OpenStack == nil {
		if len(c.Workers) > 0 {
			return nil, fmt.Errorf("workers need cloudProvider.openstack")
		}
		return nil, nil
	}
	out := make([]*v1alpha1.MachineDeployment, 0, len(c.Workers))
	for _, w := range c.Workers {
		md, err := machineDeployment(c, &w, cloud)
		if err != nil {
			return nil, fmt.Errorf("worker pool %s: %w", w.Name, err)
		}
		out = append(out, md)
	}
	return out, nil
}

func machineDeployment(c *v1beta1.Cluster, w *v1beta1.WorkerPool, cloud string) (*v1alpha1.MachineDeployment, error) {
	value, err := json.Marshal(providerConfig{
		CloudProvider:       cloud,
		CloudProviderSpec:   w.ProviderSpec.CloudProviderSpec,
		OperatingSystem:     w.ProviderSpec.OperatingSystem,
		OperatingSystemSpec: w.ProviderSpec.OperatingSystemSpec,
		SSHPublicKeys:       w.ProviderSpec.SSHPublicKeys,
	})
	if err != nil {
		return nil, err
	}
	selector := map[string]string{PoolLabel: w.Name}
	md := &v1alpha1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      w.Name,
			Namespace: Namespace,
		},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: w.Replicas,
			Selector: metav1.LabelSelector{MatchLabels: selector},
			Strategy: &v1alpha1.MachineDeploymentStrategy{
				Type: v1alpha1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{
					MaxSurge:       w.Strategy.MaxSurge,
					MaxUnavailable: w.Strategy.MaxUnavailable,
				},
			},
			Template: v1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      copyMap(selector),
					Annotations: copyMap(w.ProviderSpec.MachineObjectAnnotations),
				},
				Spec: v1alpha1.MachineSpec{
					ObjectMeta: metav1.ObjectMeta{
						Labels:      copyMap(w.ProviderSpec.Labels),
						Annotations: copyMap(w.ProviderSpec.Annotations),
					},
					Taints:       taints(w.ProviderSpec.Taints),
					ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: value}},
					Versions:     v1alpha1.MachineVersionInfo{Kubelet: strings.TrimPrefix(c.Versions.Kubernetes, "v")},
				},
			},
		},
	}
	if w.MinReadySeconds > 0 {
		mrs := w.MinReadySeconds
		md.Spec.MinReadySeconds = &mrs
	}
	if a := w.Autoscaler; a != nil {
		md.Annotations = map[string]string{
			AutoscalerMinAnnotation: fmt.Sprint(a.Min),
			AutoscalerMaxAnnotation: fmt.Sprint(a.Max),
		}
	}
	return md, nil
}

func taints(in []v1beta1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range in {
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Marshal renders objects as a YAML stream without server-populated empty fields (status,
// creationTimestamp), ready for kubectl apply.
func Marshal(mds []*v1alpha1.MachineDeployment) ([]byte, error) {
	var b strings.Builder
	for i, md := range mds {
		y, err := yamlfmt.MarshalObject(md)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return []byte(b.String()), nil
}
