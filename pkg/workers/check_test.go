package workers

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestInManifest: a MachineDeployment's field paths become the manifest's, on whole path
// segments only, and every error says which pool the controller would refuse.
func TestInManifest(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"spec.template.spec.providerSpec.value.cloudProviderSpec.tags[slipway-cluster]", "workers[2].providerSpec.cloudProviderSpec.tags[slipway-cluster]"},
		{"spec.template.spec.providerSpec.value.sshPublicKeys[1]", "workers[2].providerSpec.sshPublicKeys[1]"},
		{"spec.template.spec.providerSpec.value", "workers[2].providerSpec"},
		{"spec.template.spec.taints[0].effect", "workers[2].providerSpec.taints[0].effect"},
		{"spec.template.spec.metadata.labels", "workers[2].providerSpec.labels"},
		{"spec.template.spec.versions.kubelet", "versions.kubernetes"},
		{"spec.template.metadata.annotations[cluster.k8s.io/deletion-policy]", "workers[2].providerSpec.machineObjectAnnotations[cluster.k8s.io/deletion-policy]"},
		{"spec.strategy.rollingUpdate.maxSurge", "workers[2].strategy.maxSurge"},
		{"spec.replicas", "workers[2].replicas"},
		{"spec.selectors", "workers[2].selectors"},
	} {
		got := inManifest(&field.Error{Type: field.ErrorTypeInvalid, Field: tc.md, BadValue: 1, Detail: "bad"}, 2, "p")
		if got.Field != tc.want || got.Detail != `bad (the machine-controller would refuse pool "p" for this)` {
			t.Errorf("%s became %s (%s), want %s", tc.md, got.Field, got.Detail, tc.want)
		}
	}
}
