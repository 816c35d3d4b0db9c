// Package conditions reads and writes the metav1.Conditions of Machines, MachineSets and
// MachineDeployments.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set sets a condition and reports whether anything changed.
func Set(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, msg string) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: generation})
}

// IsTrue reports whether the condition typ is True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

// Find returns the condition typ, or nil.
func Find(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
