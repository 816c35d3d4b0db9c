package phases

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The addons-dry-run phase has the API server check every object of addons.path with a
// server-side dry run (admission and strict field validation included), so that one it refuses
// stops apply before any step changes anything; the error names each refused object's file,
// line and document.
var _ = register(Phase{
	Name:  plan.StepAddonsDryRun,
	Short: "check the objects of addons.path with a server-side dry run",
	Run: func(ctx context.Context, r *Run, _ string) error {
		c, err := r.Kube(ctx)
		if err != nil {
			return err
		}
		return dryRunAddons(ctx, c, r, r.Rendered().UserAddons)
	},
})

// The addons phase applies the objects of addons.path, as slipway (kube.FieldManager), with
// strict field validation, after checking them all with a dry run; then deletes the objects
// that carry the set's label and that the folder no longer renders. The kinds it applies are
// recorded (applied.AddonKindsKey) before the first object, so that a run interrupted
// anywhere leaves objects the next one finds.
var _ = register(Phase{
	Name:  plan.StepAddons,
	Short: "apply the objects of addons.path and prune those that left it",
	Run:   func(ctx context.Context, r *Run, _ string) error { return applyUserAddons(ctx, r) },
})

// userAddonsRun is what the addons phase reads of a run.
type userAddonsRun interface {
	api
	logger
	manifest
	Rendered() Rendered
}

func applyUserAddons(ctx context.Context, r userAddonsRun) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	objs := r.Rendered().UserAddons
	if err := dryRunAddons(ctx, c, r, objs); err != nil {
		return err
	}
	recorded, err := applied.AddonKinds(ctx, c)
	if err != nil {
		return err
	}
	var kinds []schema.GroupVersionKind
	for _, o := range objs {
		kinds = append(kinds, o.Obj.GroupVersionKind())
	}
	if err := applied.RecordAddonKinds(ctx, c, append(recorded, kinds...)); err != nil {
		return err
	}
	if err := c.ApplyWith(ctx, namespacesFirst(objs), kube.ApplyOptions{Strict: true}); err != nil {
		var oe *kube.ObjectError
		if errors.As(err, &oe) {
			for _, o := range objs {
				if o.Obj == oe.Object {
					return fmt.Errorf("addons.path %s: %w", o, err)
				}
			}
		}
		return fmt.Errorf("addons.path: %w", err)
	}
	r.Logf("", "applied %d objects of addons.path", len(objs))
	if err := pruneUserAddons(ctx, c, r, append(recorded, kinds...), objs); err != nil {
		return err
	}
	return applied.RecordAddonKinds(ctx, c, kinds)
}

// namespacesFirst orders objs for applying: Namespaces before the objects that may live in
// them, and otherwise as the folder has them (ApplyWith puts CustomResourceDefinitions first).
func namespacesFirst(objs []addons.Object) []*unstructured.Unstructured {
	var out, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.Obj.GroupVersionKind() == (schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}) {
			out = append(out, o.Obj)
		} else {
			rest = append(rest, o.Obj)
		}
	}
	return append(out, rest...)
}

// dryRunAddons applies every object with a server-side dry run and reports every one the API
// server refuses. An object that cannot be checked yet because the set itself creates what it
// needs (its kind's CustomResourceDefinition, or its Namespace) is left to the apply, and said so.
func dryRunAddons(ctx context.Context, c *kube.Client, log logger, objs []addons.Object) error {
	crdKinds, namespaces := map[schema.GroupKind]bool{}, map[string]bool{}
	for _, o := range objs {
		switch o.Obj.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
			group, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Obj.Object, "spec", "names", "kind")
			crdKinds[schema.GroupKind{Group: group, Kind: kind}] = true
		case schema.GroupKind{Kind: "Namespace"}:
			namespaces[o.Obj.GetName()] = true
		}
	}
	var refused []error
	var later []string
	for _, o := range objs {
		err := c.ApplyObject(ctx, o.Obj, kube.ApplyOptions{DryRun: true, Strict: true})
		switch {
		case err == nil:
		case meta.IsNoMatchError(err) && crdKinds[o.Obj.GroupVersionKind().GroupKind()]:
			later = append(later, o.String()+": its CustomResourceDefinition is in addons.path")
		case namespaceNotFound(err) && namespaces[o.Obj.GetNamespace()]:
			later = append(later, o.String()+": its Namespace is in addons.path")
		default:
			refused = append(refused, fmt.Errorf("%s: %w", o, err))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("the API server refuses %d of the %d objects of addons.path (server-side dry run; nothing was changed):\n%w",
			len(refused), len(objs), errors.Join(refused...))
	}
	msg := fmt.Sprintf("the API server accepts the %d objects of addons.path (server-side dry run)", len(objs)-len(later))
	if len(later) > 0 {
		msg += fmt.Sprintf("; %d are checked when they are applied, after what they need: %s", len(later), strings.Join(later, "; "))
	}
	log.Logf("", "%s", msg)
	return nil
}

// namespaceNotFound reports whether err is the API's refusal of an object whose namespace does
// not exist.
func namespaceNotFound(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces"
}
