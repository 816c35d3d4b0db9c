package pools

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// milestone is a step of a Machine's way to a Ready Node, and how long after the Machine's
// creation it was reached.
type milestone struct {
	what  string
	after time.Duration
}

// machine summarises m, whose Node (nil before it registers) is node, as seen at now.
func machine(m *v1alpha1.Machine, node *corev1.Node, now time.Time) Machine {
	created := m.CreationTimestamp.Time
	since := func(t metav1.Time) time.Duration {
		if t.IsZero() || t.Time.Before(created) {
			return now.Sub(created)
		}
		return t.Sub(created)
	}
	out := Machine{Name: m.Name, Phase: string(m.Status.Phase), conditions: m.Status.Conditions, object: m}
	if m.Status.ErrorReason != nil {
		out.failure = string(*m.Status.ErrorReason)
		if m.Status.ErrorMessage != nil {
			out.failure += ": " + *m.Status.ErrorMessage
		}
	}
	if m.Spec.ProviderID != nil {
		out.ProviderID = *m.Spec.ProviderID
	}
	out.Address = address(m.Status.Addresses)
	instance := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.MachineInstanceReady)
	if instance != nil && instance.Status == metav1.ConditionTrue {
		what := "server ACTIVE"
		if out.ProviderID != "" {
			what += ", " + out.ProviderID
		}
		out.milestones = append(out.milestones, milestone{what, since(instance.LastTransitionTime)})
	}
	// The address has no time of its own; it comes with the running server.
	if out.Address != "" {
		at := now.Sub(created)
		if instance != nil && instance.Status == metav1.ConditionTrue {
			at = since(instance.LastTransitionTime)
		}
		out.milestones = append(out.milestones, milestone{"address " + out.Address, at})
	}
	if ref := m.Status.NodeRef; ref != nil {
		out.Node = ref.Name
		var at metav1.Time
		if c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.MachineNodeJoined); c != nil && c.Status == metav1.ConditionTrue {
			at = c.LastTransitionTime
		}
		out.milestones = append(out.milestones, milestone{"Node " + ref.Name + " registered", since(at)})
	}
	if node != nil && kube.NodeReady(node) {
		out.Ready = true
		ready := kube.ReadyCondition(node).LastTransitionTime
		out.milestones = append(out.milestones, milestone{"Ready", since(ready)})
	}
	// Conditions keep whole seconds, and each is set by its own writer: keep the steps in order.
	for i := 1; i < len(out.milestones); i++ {
		out.milestones[i].after = max(out.milestones[i].after, out.milestones[i-1].after)
	}
	elapsed := now.Sub(created)
	if out.Ready {
		elapsed = out.milestones[len(out.milestones)-1].after
	}
	elapsed = elapsed.Round(time.Second)
	out.Elapsed, out.ElapsedSeconds = elapsed.String(), int64(elapsed/time.Second)
	return out
}

// address is the Machine's internal address, else its first one.
func address(as []corev1.NodeAddress) string {
	for _, a := range as {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	if len(as) > 0 {
		return as[0].Address
	}
	return ""
}

// conditions describes a Machine's conditions in one line: "InstanceReady=True,
// NodeJoined=False (NodeNotFound: no Node has the server's provider ID)".
func conditions(cs []metav1.Condition) string {
	if len(cs) == 0 {
		return "no conditions yet"
	}
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Status != metav1.ConditionTrue && (c.Reason != "" || c.Message != "") {
			s += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	return s
}
