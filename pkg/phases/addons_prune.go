package phases

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// pruneUserAddons deletes the objects of kinds that carry the label of the manifest's addon set
// and that keep (what addons.path renders now) does not hold: other objects first, then
// Namespaces, then CustomResourceDefinitions, whose deletion takes their contents along. Each
// deletion is of the very object listed (a UID precondition), so an object made anew under
// the same name in the meantime stays. A kind the API no longer serves has nothing to prune.
func pruneUserAddons(ctx context.Context, c *kube.Client, r userAddonsRun, kinds []schema.GroupVersionKind, keep []addons.Object) error {
	kept := map[string]bool{}
	for _, o := range keep {
		m, err := c.Mapper.RESTMapping(o.Obj.GroupVersionKind().GroupKind(), o.Obj.GroupVersionKind().Version)
		if err != nil {
			return fmt.Errorf("addons.path %s: %w", o, err)
		}
		kept[identity(m, o.Obj)] = true
	}
	type doomed struct {
		ri  dynamic.ResourceInterface
		obj unstructured.Unstructured
	}
	var order [3][]doomed
	done := map[schema.GroupKind]bool{}
	for _, gvk := range kinds {
		if done[gvk.GroupKind()] {
			continue
		}
		done[gvk.GroupKind()] = true
		m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("finding the API of %s: %w", gvk.Kind, err)
		}
		list, err := c.Dynamic.Resource(m.Resource).List(ctx, metav1.ListOptions{LabelSelector: addons.SetLabel + "=" + r.Manifest().Name})
		if err != nil {
			return fmt.Errorf("listing the %s of addons.path: %w", m.Resource.Resource, err)
		}
		for _, obj := range list.Items {
			if kept[identity(m, &obj)] {
				continue
			}
			var ri dynamic.ResourceInterface = c.Dynamic.Resource(m.Resource)
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace())
			}
			rank := 0
			switch gvk.GroupKind() {
			case schema.GroupKind{Kind: "Namespace"}:
				rank = 1
			case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
				rank = 2
			}
			order[rank] = append(order[rank], doomed{ri, obj})
		}
	}
	background := metav1.DeletePropagationBackground
	for _, rank := range order {
		for _, d := range rank {
			uid := d.obj.GetUID()
			err := d.ri.Delete(ctx, d.obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue // gone already, or another object by now
			}
			if err != nil {
				return fmt.Errorf("pruning %s %s of addons.path: %w", d.obj.GetKind(), addons.Ref(d.obj.GetNamespace(), d.obj.GetName()), err)
			}
			r.Logf("", "pruned %s %s (from %s, no longer in addons.path)", d.obj.GetKind(), addons.Ref(d.obj.GetNamespace(), d.obj.GetName()),
				d.obj.GetAnnotations()[addons.SourceAnnotation])
		}
	}
	return nil
}

// identity is an object's group, kind, namespace (as the API server keeps it: "default" for a
// namespaced object written without one) and name.
func identity(m *meta.RESTMapping, o *unstructured.Unstructured) string {
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if ns = o.GetNamespace(); ns == "" {
			ns = "default"
		}
	}
	return m.GroupVersionKind.Group + "/" + m.GroupVersionKind.Kind + "/" + ns + "/" + o.GetName()
}
