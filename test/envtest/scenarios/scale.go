package scenarios

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/test/envtest"
)

// ScaleUpDown scales a MachineDeployment 0→5→2 through the scale subresource and checks every
// Machine's server, Node link, Node metadata and the deployment's status on the way.
func ScaleUpDown(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	md := f.deployment("workers", 0, intstr.FromInt32(1), intstr.FromInt32(0))
	f.create(md)
	envtest.Eventually(t, wait, "status of an empty deployment", func() (bool, string) {
		env.Get(t, md)
		return md.Status.ObservedGeneration == md.Generation && condTrue(md.Status.Conditions, v1alpha1.MachineDeploymentAvailable), fmt.Sprint(md.Status)
	})
	if n := len(f.machines()); n != 0 {
		t.Fatalf("0 replicas made %d machines", n)
	}

	f.scale(md, 5)
	machines := f.waitRunning(5)
	for i := range machines {
		f.checkNode(&machines[i])
	}
	envtest.Eventually(t, wait, "deployment status 5/5", func() (bool, string) {
		env.Get(t, md)
		s := md.Status
		return s.Replicas == 5 && s.ReadyReplicas == 5 && s.AvailableReplicas == 5 && s.UpdatedReplicas == 5 &&
			s.UnavailableReplicas == 0 && condTrue(s.Conditions, v1alpha1.MachineDeploymentAvailable), fmt.Sprintf("%+v", s)
	})

	f.scale(md, 2)
	kept := f.waitRunning(2)
	envtest.Eventually(t, wait, "nodes of removed machines deleted", func() (bool, string) {
		var nodes corev1.NodeList
		if err := env.Client.List(f.ctx, &nodes); err != nil {
			return false, err.Error()
		}
		mine := 0
		for _, n := range nodes.Items {
			if ns, _, _ := cut(n.Annotations[v1alpha1.NodeMachineAnnotation]); ns == f.ns {
				mine++
			}
		}
		return mine == 2, fmt.Sprintf("%d nodes of this namespace", mine)
	})
	for i := range kept {
		f.checkNode(&kept[i])
	}
	var tokens corev1.SecretList
	if err := env.Client.List(f.ctx, &tokens, client.InNamespace("kube-system"), client.HasLabels{"cluster.k8s.io/machine-uid"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range tokens.Items {
		for _, m := range machines {
			if s.Labels["cluster.k8s.io/machine-uid"] == string(m.UID) {
				t.Errorf("bootstrap token %s of joined machine %s was not deleted", s.Name, m.Name)
			}
		}
	}
}

// checkNode verifies the link between a Running Machine and its Node.
func (f *fixture) checkNode(m *v1alpha1.Machine) {
	f.t.Helper()
	if m.Status.NodeRef == nil {
		f.t.Fatalf("machine %s has no nodeRef", m.Name)
	}
	n := &corev1.Node{}
	n.Name = m.Status.NodeRef.Name
	if !f.env.Get(f.t, n) {
		f.t.Fatalf("node %s of machine %s does not exist", n.Name, m.Name)
	}
	if got, want := n.Annotations[v1alpha1.NodeMachineAnnotation], m.Namespace+"/"+m.Name; got != want {
		f.t.Errorf("node %s annotation %s = %q, want %q", n.Name, v1alpha1.NodeMachineAnnotation, got, want)
	}
	if _, ok := n.Labels["node-role.kubernetes.io/worker"]; !ok {
		f.t.Errorf("node %s lacks the template label node-role.kubernetes.io/worker: %v", n.Name, n.Labels)
	}
	if n.Annotations["example.com/owner"] != "team-a" {
		f.t.Errorf("node %s lacks the template annotation example.com/owner", n.Name)
	}
	dedicated, notReady := false, false
	for _, tn := range n.Spec.Taints {
		dedicated = dedicated || tn.Key == "dedicated" && tn.Effect == corev1.TaintEffectPreferNoSchedule
		notReady = notReady || tn.Key == v1alpha1.NotReadyTaintKey
	}
	if !dedicated || notReady {
		f.t.Errorf("node %s taints = %v, want the template's dedicated taint and no %s", n.Name, n.Spec.Taints, v1alpha1.NotReadyTaintKey)
	}
	if m.Spec.ProviderID == nil || (n.Spec.ProviderID != "" && n.Spec.ProviderID != *m.Spec.ProviderID) {
		f.t.Errorf("machine %s providerID %v does not match node %s providerID %q", m.Name, m.Spec.ProviderID, n.Name, n.Spec.ProviderID)
	}
	if m.Status.ProviderStatus == nil || len(m.Status.Addresses) == 0 {
		f.t.Errorf("machine %s has no provider status or addresses", m.Name)
	}
}

func condTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

func findCond(conds []metav1.Condition, typ string) *metav1.Condition {
	return meta.FindStatusCondition(conds, typ)
}
