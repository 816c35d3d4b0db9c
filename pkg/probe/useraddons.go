package probe

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// UserAddons lists the objects of the cluster that carry the label of the user addon set named
// set (addons.SetLabel), of the kinds recorded as applied (applied.AddonKinds) and of the kinds
// want (what addons.path renders now), with the file and hash recorded on each; and says, for
// each of those kinds that the API serves, whether it is namespaced. A kind the API does not
// serve has no objects: its CustomResourceDefinition is gone, or not applied yet.
func UserAddons(ctx context.Context, c *kube.Client, set string, want []schema.GroupVersionKind) ([]plan.AddonObject, map[string]bool, error) {
	recorded, err := applied.AddonKinds(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	var objs []plan.AddonObject
	namespaced := map[string]bool{}
	for _, gvk := range append(recorded, want...) {
		key := gvk.Group + "/" + gvk.Kind
		if _, done := namespaced[key]; done {
			continue
		}
		m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("finding the API of %s: %w", gvk.Kind, err)
		}
		namespaced[key] = m.Scope.Name() == meta.RESTScopeNameNamespace
		opts := metav1.ListOptions{LabelSelector: addons.SetLabel + "=" + set, Limit: 500}
		for {
			list, err := c.Dynamic.Resource(m.Resource).List(ctx, opts)
			if err != nil {
				return nil, nil, fmt.Errorf("listing the %s of addons.path: %w", m.Resource.Resource, err)
			}
			for _, o := range list.Items {
				objs = append(objs, plan.AddonObject{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(),
					Source: o.GetAnnotations()[addons.SourceAnnotation], Hash: o.GetAnnotations()[addons.HashAnnotation]})
			}
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	return objs, namespaced, nil
}
