// Package v1alpha1 holds the cluster.k8s.io/v1alpha1 worker-machine API: Machine, MachineSet and
// MachineDeployment. The shapes are wire-compatible with the objects that existing
// machine-controller users already write (providerSpec.value carries cloudProvider,
// cloudProviderSpec, operatingSystem, operatingSystemSpec and sshPublicKeys), so their manifests
// apply unchanged. slipway generates these objects from the cluster manifest, and the in-cluster
// machine-controller reconciles them.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.k8s.io
package v1alpha1
