package scenarios

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/test/envtest"
)

// expectEvent waits for an event with reason about obj.
func (f *fixture) expectEvent(obj client.Object, reason string) {
	f.t.Helper()
	envtest.Eventually(f.t, wait, fmt.Sprintf("event %s on %s", reason, obj.GetName()), func() (bool, string) {
		var evs corev1.EventList
		if err := f.env.Client.List(f.ctx, &evs, client.InNamespace(obj.GetNamespace())); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.InvolvedObject.UID == obj.GetUID() {
				if e.Reason == reason {
					return true, ""
				}
				seen = append(seen, e.Reason)
			}
		}
		return false, fmt.Sprintf("events so far: %v", seen)
	})
}
