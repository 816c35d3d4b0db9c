package scenarios

import (
	"fmt"
	"strings"

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

// eventSummary lists the namespace's events that are warnings or replacements, as
// "object reason: message", for a failure message to say what the controllers did.
func (f *fixture) eventSummary() string {
	var evs corev1.EventList
	if err := f.env.Client.List(f.ctx, &evs, client.InNamespace(f.ns)); err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning || e.Reason == "Replacing" || e.Reason == "SuccessfulDelete" {
			out = append(out, fmt.Sprintf("%s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message))
		}
	}
	return strings.Join(out, "; ")
}
