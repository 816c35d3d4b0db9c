package machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
)

// recordProviderID sets spec.providerID to the server the provider reports. Normally that
// happens once; it happens again when the provider replaced the Machine's server (Nova put the
// first one in ERROR). Then the Node of the old server, if it ever registered and this
// controller linked it, belongs to a server that no longer exists: it is deleted, the link goes
// with the old provider ID, and the Machine joins anew with its new server.
func (r *Reconciler) recordProviderID(ctx context.Context, m *v1alpha1.Machine, providerID string) error {
	var old string
	if m.Spec.ProviderID != nil {
		old = *m.Spec.ProviderID
	}
	if l := nodelink.Of(m); old != "" && l != nil {
		n := &corev1.Node{}
		err := r.client.Get(ctx, client.ObjectKey{Name: l.Name}, n)
		switch {
		case client.IgnoreNotFound(err) != nil:
			return fmt.Errorf("getting node %s of the replaced server of machine %s/%s: %w", l.Name, m.Namespace, m.Name, err)
		case err == nil && l.Matches(m, n) && n.Spec.ProviderID == old:
			if err := r.client.Delete(ctx, n, client.Preconditions{UID: &n.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting node %s of the replaced server of machine %s/%s: %w", n.Name, m.Namespace, m.Name, err)
			}
		}
	}
	orig := m.DeepCopy()
	m.Spec.ProviderID = machineutil.PtrTo(providerID)
	if old != "" {
		nodelink.Set(m, nil)
	}
	if err := r.client.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("recording provider ID %s on machine %s/%s: %w", providerID, m.Namespace, m.Name, err)
	}
	if old == "" {
		return nil
	}
	r.recorder.Eventf(m, corev1.EventTypeNormal, "ServerReplaced", "Server %s was replaced by %s", old, providerID)
	m.Status.NodeRef = nil
	return nil
}
