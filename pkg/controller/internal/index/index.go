// Package index names the cache indexes the reconcilers look Machines, MachineSets and Nodes up
// by, and adds them to the manager's cache.
package index

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
)

// Cache indexes. Lookups by owner, provider ID and address go through them, so that a reconcile
// never scans every Machine or Node.
const (
	Owner      = "slipway.ownerUID"
	ProviderID = "slipway.providerID"
	Address    = "slipway.address"
	NodeName   = "slipway.nodeName"
	// LinkedNode is the name of the Node the controller linked to a Machine (nodelink), which
	// unlike status.nodeRef (NodeName) only the controller writes.
	LinkedNode = "slipway.linkedNode"
)

func controllerOwnerUID(o metav1.Object) []string {
	if ref := metav1.GetControllerOf(o); ref != nil {
		return []string{string(ref.UID)}
	}
	return nil
}

// Add adds the indexes to mgr's cache.
func Add(ctx context.Context, mgr manager.Manager) error {
	idx := mgr.GetFieldIndexer()
	add := func(obj client.Object, name string, fn client.IndexerFunc) error {
		if err := idx.IndexField(ctx, obj, name, fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", obj, name, err)
		}
		return nil
	}
	owner := func(o client.Object) []string { return controllerOwnerUID(o) }
	return errors.Join(
		add(&v1alpha1.Machine{}, Owner, owner),
		add(&v1alpha1.MachineSet{}, Owner, owner),
		add(&v1alpha1.Machine{}, ProviderID, func(o client.Object) []string {
			if m := o.(*v1alpha1.Machine); m.Spec.ProviderID != nil {
				return []string{*m.Spec.ProviderID}
			}
			return nil
		}),
		add(&v1alpha1.Machine{}, Address, func(o client.Object) []string {
			var out []string
			for _, a := range o.(*v1alpha1.Machine).Status.Addresses {
				out = append(out, a.Address)
			}
			return out
		}),
		add(&v1alpha1.Machine{}, LinkedNode, func(o client.Object) []string {
			if l := nodelink.Of(o.(*v1alpha1.Machine)); l != nil {
				return []string{l.Name}
			}
			return nil
		}),
		add(&v1alpha1.Machine{}, NodeName, func(o client.Object) []string {
			if ref := o.(*v1alpha1.Machine).Status.NodeRef; ref != nil {
				return []string{ref.Name}
			}
			return nil
		}),
		add(&corev1.Node{}, ProviderID, func(o client.Object) []string {
			if id := o.(*corev1.Node).Spec.ProviderID; id != "" {
				return []string{id}
			}
			return nil
		}),
		add(&corev1.Node{}, Address, func(o client.Object) []string {
			var out []string
			for _, a := range o.(*corev1.Node).Status.Addresses {
				if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
					out = append(out, a.Address)
				}
			}
			return out
		}),
	)
}
