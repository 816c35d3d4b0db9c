// Package coalesce delays the Machine events that MachineSets and MachineDeployments watch, so
// that the changes of many Machines within a second cost their owner one reconcile.
package coalesce

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MachineEventDelay is how long a MachineSet or MachineDeployment lets the events of its
// Machines gather before it looks at them again.
const MachineEventDelay = time.Second

// Gathered wraps h, which maps a Machine to its owner, so that every Machine event enqueues the
// owner after delay instead of at once. A work queue holds a key once, and waiting adds of one
// key fold into the earliest: the Machines of a set that change within delay cost the set one
// reconcile and at most one status write, where each change cost one before (about one status
// write per Machine for the set and one for the deployment in the 500-Machine benchmark).
//
// Nothing an owner does needs the event sooner: a MachineSet knows the Machines it created and
// deleted itself (its expectations), and a second's delay before it replaces a Machine that
// someone else deleted, or before a rollout takes its next step, is nothing beside the minutes
// a server takes to boot. Changes of the owner itself are not delayed.
func Gathered(h handler.EventHandler, delay time.Duration) handler.EventHandler {
	later := func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return delayedAdds{TypedRateLimitingInterface: q, delay: delay}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, later(q))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, later(q))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, later(q))
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, later(q))
		},
	}
}

// delayedAdds turns a handler's Add into AddAfter.
type delayedAdds struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	delay time.Duration
}

func (q delayedAdds) Add(r reconcile.Request) { q.AddAfter(r, q.delay) }
