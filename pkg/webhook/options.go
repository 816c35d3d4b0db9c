package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/webhook/validation"
)

// Options are what admission needs to know about the controller it guards.
type Options struct {
	// SpecChecks are the providers' admission checks of cloudProviderSpec, by cloudProvider.
	SpecChecks map[string]cloud.SpecCheck
	// Controllers are the users who may set spec.providerID and the providers' state
	// annotations: the machine-controller's service account, and any user an operator adds
	// (a backup tool that restores Machines, say). Everyone else who may write Machines could
	// otherwise point a deletion at a server or Node that is not the Machine's.
	Controllers []string
}

// controllerOwned returns the paths of the controller's fields that differ between old and m:
// spec.providerID and the state annotations (old is nil on create).
func controllerOwned(old, m *v1alpha1.Machine) []*field.Path {
	var paths []*field.Path
	var oldID *string
	var oldAnn map[string]string
	if old != nil {
		oldID, oldAnn = old.Spec.ProviderID, old.Annotations
	}
	if !equality.Semantic.DeepEqual(oldID, m.Spec.ProviderID) {
		paths = append(paths, field.NewPath("spec", "providerID"))
	}
	for _, k := range validation.StateKeys(oldAnn, m.Annotations) {
		if oldAnn[k] != m.Annotations[k] {
			paths = append(paths, field.NewPath("metadata", "annotations").Key(k))
		}
	}
	return paths
}

// checkWriter refuses changes to the controller's fields from anyone but the controllers.
func (o Options) checkWriter(ctx context.Context, old, m *v1alpha1.Machine) field.ErrorList {
	paths := controllerOwned(old, m)
	if len(paths) == 0 {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	user := req.UserInfo.Username
	if err == nil && slices.Contains(o.Controllers, user) {
		return nil
	}
	var errs field.ErrorList
	for _, p := range paths {
		errs = append(errs, field.Forbidden(p, fmt.Sprintf(
			"is written only by the machine-controller (%s), not by %s: it names the cloud resources that "+
				"deleting the Machine deletes", strings.Join(o.Controllers, ", "), user)))
	}
	return errs
}

// checks are admission's checks of Machines and templates, with the providers' spec checks.
func (o Options) checks() validation.Checks { return validation.Checks{Specs: o.SpecChecks} }
