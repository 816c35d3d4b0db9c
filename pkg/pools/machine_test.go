package pools

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

func TestMachineMilestones(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(created.Add(time.Duration(s) * time.Second)) }
	id := "openstack:///0b6f"
	running := &v1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-a-x", CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1alpha1.MachineSpec{ProviderID: &id},
		Status: v1alpha1.MachineStatus{
			Phase:     v1alpha1.MachinePhaseRunning,
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.9"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.7"}},
			NodeRef:   &corev1.ObjectReference{Kind: "Node", Name: "pool-a-x"},
			Conditions: []metav1.Condition{
				{Type: v1alpha1.MachineInstanceReady, Status: metav1.ConditionTrue, LastTransitionTime: at(14)},
				{Type: v1alpha1.MachineNodeJoined, Status: metav1.ConditionTrue, LastTransitionTime: at(70)},
			},
		},
	}
	node := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: at(95)}}}}
	tests := []struct {
		name    string
		m       *v1alpha1.Machine
		node    *corev1.Node
		want    string
		ready   bool
		elapsed string
	}{
		{name: "Ready: every step with its time from the Machine's creation", m: running, node: node, ready: true, elapsed: "1m35s",
			want: "server ACTIVE, openstack:///0b6f 14s; address 10.0.0.7 14s; Node pool-a-x registered 1m10s; Ready 1m35s"},
		{name: "NotReady Node: registered, not Ready; elapsed runs on", m: running, elapsed: "10m0s",
			node: &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}},
			want: "server ACTIVE, openstack:///0b6f 14s; address 10.0.0.7 14s; Node pool-a-x registered 1m10s"},
		{name: "just created: nothing yet", m: &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(created)}},
			elapsed: "10m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := machine(tt.m, tt.node, created.Add(10*time.Minute))
			var steps []string
			for _, s := range got.milestones {
				steps = append(steps, s.what+" "+s.after.String())
			}
			if s := strings.Join(steps, "; "); s != tt.want {
				t.Errorf("milestones:\n got %s\nwant %s", s, tt.want)
			}
			if got.Ready != tt.ready || got.Elapsed != tt.elapsed {
				t.Errorf("ready %t elapsed %s, want %t %s", got.Ready, got.Elapsed, tt.ready, tt.elapsed)
			}
		})
	}
}

func TestClean(t *testing.T) {
	in := "boot\r\n\x1b[32m[  OK  ]\x1b[0m Started\x07 kubelet\n--token abcdef.0123456789abcdef\ttab\n"
	want := "boot\n[  OK  ] Started kubelet\n--token <redacted bootstrap token>\ttab\n"
	if got := clean(in); got != want {
		t.Errorf("clean:\n got %q\nwant %q", got, want)
	}
}

func TestConditions(t *testing.T) {
	got := conditions([]metav1.Condition{
		{Type: "InstanceReady", Status: metav1.ConditionTrue, Reason: "Running"},
		{Type: "NodeJoined", Status: metav1.ConditionFalse, Reason: "NodeNotFound", Message: "no Node has the provider ID"},
	})
	if want := "InstanceReady=True, NodeJoined=False (NodeNotFound: no Node has the provider ID)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := conditions(nil); got != "no conditions yet" {
		t.Errorf("no conditions: %q", got)
	}
}
