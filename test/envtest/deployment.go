package envtest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// MachineDeployment returns a MachineDeployment of replicas Machines labelled labels, with the
// providerSpec raw and kubelet 1.36.3, rolled with maxSurge surge and maxUnavailable 0.
func MachineDeployment(ns, name string, labels map[string]string, replicas, surge int32, raw []byte) *v1alpha1.MachineDeployment {
	maxSurge, maxUnavailable := intstr.FromInt32(surge), intstr.FromInt32(0)
	return &v1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.MachineDeploymentSpec{
			Replicas: &replicas,
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Strategy: &v1alpha1.MachineDeploymentStrategy{Type: v1alpha1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &v1alpha1.MachineRollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable}},
			Template: v1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1alpha1.MachineSpec{
					ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}},
					Versions:     v1alpha1.MachineVersionInfo{Kubelet: "1.36.3"},
				},
			},
		},
	}
}
