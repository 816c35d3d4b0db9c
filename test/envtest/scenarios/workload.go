package scenarios

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// runPod creates a Running, Ready pod bound to node, as the scheduler and kubelet would have
// made it. owner, when set, makes it a DaemonSet's pod; mirror makes it a static pod's mirror.
func (f *fixture) runPod(name, node string, labels map[string]string, owner *appsv1.DaemonSet, mirror bool) *corev1.Pod {
	f.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10.1"}},
			TerminationGracePeriodSeconds: ptr(int64(30))},
	}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}
	}
	if mirror {
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static"}
	}
	f.create(p)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	if err := f.env.Client.Status().Update(f.ctx, p); err != nil {
		f.t.Fatalf("marking pod %s running: %v", name, err)
	}
	return p
}

// daemonSet creates a DaemonSet object whose pods drains must skip.
func (f *fixture) daemonSet(name string) *appsv1.DaemonSet {
	labels := map[string]string{"ds": name}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10.1"}}}}},
	}
	f.create(ds)
	return ds
}

// pdb creates a PodDisruptionBudget and sets its status as the disruption controller (which
// envtest does not run) would, allowing allowed disruptions.
func (f *fixture) pdb(name string, labels map[string]string, allowed int32) *policyv1.PodDisruptionBudget {
	f.t.Helper()
	one := intstr.FromInt32(1)
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	f.create(p)
	f.setPDB(p, allowed)
	return p
}

func (f *fixture) setPDB(p *policyv1.PodDisruptionBudget, allowed int32) {
	f.t.Helper()
	f.env.Get(f.t, p)
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: p.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1 + allowed, DesiredHealthy: 1, ExpectedPods: 1 + allowed}
	if err := f.env.Client.Status().Update(f.ctx, p); err != nil {
		f.t.Fatalf("setting status of PDB %s: %v", p.Name, err)
	}
}

// consistently fails the test if cond turns false within d: the check for "nothing happens".
func (f *fixture) consistently(d time.Duration, what string, cond func() (bool, string)) {
	f.t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if ok, msg := cond(); !ok {
			f.t.Fatalf("%s stopped holding: %s", what, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }
