package workers

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/webhook/validation"
)

// Check runs on every pool's MachineDeployment what the machine-controller checks before it
// calls the cloud, with the same functions: its admission of the MachineDeployment (and so of
// its MachineSets) and of the Machines made from it, and the OpenStack provider's check of the
// cloudProviderSpec (openstack.Policy.ControllerCheck) under pol, the policy apply deploys. So
// a pool the controller would refuse fails here, before apply; each error names the field of
// the cluster description at fault (workers[i]..., or versions.kubernetes for the kubelet).
func Check(c *v1beta1.Cluster, pol openstack.Policy) field.ErrorList {
	mds, err := MachineDeployments(c)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("workers"), "", err.Error())}
	}
	checks := validation.Checks{Specs: map[string]cloud.SpecCheck{"openstack": pol.ControllerCheck()}}
	var errs field.ErrorList
	for i, md := range mds {
		own := checks.MachineDeployment(md)
		// Each Machine is made with the template's metadata, and admitted on its own.
		own = append(own, validation.DeletionPolicy(&md.Spec.Template.ObjectMeta, field.NewPath("spec", "template", "metadata"))...)
		for _, e := range own {
			errs = append(errs, inManifest(e, i, md.Name))
		}
	}
	return errs
}

// manifestPaths map a MachineDeployment's field paths (prefixes, the longest first) to the
// worker pool fields they are rendered from; "workers[i]" stands for the pool's own path.
var manifestPaths = []struct{ md, manifest string }{
	{"spec.template.spec.providerSpec.value", "workers[i].providerSpec"},
	{"spec.template.spec.metadata", "workers[i].providerSpec"},
	{"spec.template.spec.taints", "workers[i].providerSpec.taints"},
	{"spec.template.spec.versions.kubelet", "versions.kubernetes"},
	{"spec.template.metadata.annotations", "workers[i].providerSpec.machineObjectAnnotations"},
	{"spec.template.metadata.labels", "workers[i].name"},
	{"spec.selector", "workers[i].name"},
	{"spec.strategy.rollingUpdate", "workers[i].strategy"},
	{"spec", "workers[i]"},
}

// inManifest rewrites a MachineDeployment's field error to name the manifest's field, and says
// which pool and check it comes from.
func inManifest(e *field.Error, i int, pool string) *field.Error {
	out := *e
	for _, m := range manifestPaths {
		rest, ok := strings.CutPrefix(e.Field, m.md)
		if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			out.Field = strings.Replace(m.manifest, "workers[i]", fmt.Sprintf("workers[%d]", i), 1) + rest
			break
		}
	}
	note := fmt.Sprintf("the machine-controller would refuse pool %q for this", pool)
	if out.Detail == "" {
		out.Detail = note
	} else {
		out.Detail += " (" + note + ")"
	}
	return &out
}
