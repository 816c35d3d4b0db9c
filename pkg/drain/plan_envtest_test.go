package drain_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/drain"
)

// TestPlan sorts the pods of a node, listed from a real API server, into what a drain evicts,
// waits for, skips and refuses.
func TestPlan(t *testing.T) {
	type pod struct {
		name string
		opts []podOpt
	}
	cases := []struct {
		name    string
		opts    drain.Options
		pods    []pod
		groups  string // "order:pod,pod order:pod"
		wait    string
		skipped string
		err     []string // substrings of the error, if any
	}{
		{name: "daemonset and mirror pods are skipped",
			pods:   []pod{{"web", nil}, {"agent", []podOpt{daemonSetPod}}, {"static", []podOpt{mirror, unmanaged}}},
			groups: "0:web", skipped: "agent,static"},
		{name: "a pod owned by a non-apps DaemonSet kind is evicted",
			pods:   []pod{{"odd", []podOpt{ownedBy("DaemonSet", "example.com/v1")}}},
			groups: "0:odd"},
		{name: "skip annotation",
			pods:   []pod{{"keep", []podOpt{annotated(drain.SkipAnnotation, "true")}}, {"go", []podOpt{annotated(drain.SkipAnnotation, "false")}}},
			groups: "0:go", skipped: "keep"},
		{name: "orders group pods lowest first and default to 0",
			pods:   []pod{{"db", []podOpt{order("10")}}, {"app-a", nil}, {"app-b", []podOpt{order("0")}}, {"proxy", []podOpt{order("-5")}}},
			groups: "-5:proxy 0:app-a,app-b 10:db"},
		{name: "wait-for-completion pods are waited for, not evicted, until they finish",
			pods:   []pod{{"job", []podOpt{annotated(drain.WaitForCompletionAnnotation, "true")}}, {"web", nil}},
			groups: "0:web", wait: "job"},
		{name: "emptyDir refused by default",
			pods: []pod{{"cache", []podOpt{emptyDir}}, {"web", nil}},
			err:  []string{"pod ", "/cache: its emptyDir volumes (scratch) would lose their data", "DeleteEmptyDirData"}},
		{name: "emptyDir allowed by the policy",
			opts: drain.Options{DeleteEmptyDirData: true}, pods: []pod{{"cache", []podOpt{emptyDir}}},
			groups: "0:cache"},
		{name: "unmanaged refused by default",
			pods: []pod{{"bare", []podOpt{unmanaged}}},
			err:  []string{"/bare: no controller owns it", "EvictUnmanaged"}},
		{name: "unmanaged allowed by the option",
			opts: drain.Options{EvictUnmanaged: true}, pods: []pod{{"bare", []podOpt{unmanaged}}},
			groups: "0:bare"},
		{name: "invalid annotations name the pod and the key",
			pods: []pod{{"a", []podOpt{order("first")}}, {"b", []podOpt{annotated(drain.SkipAnnotation, "yes")}}},
			err: []string{`/a: annotation drain.slipway.dev/order: invalid value "first": must be an integer`,
				`/b: annotation drain.slipway.dev/skip: invalid value "yes"`}},
		{name: "skip and wait-for-completion together are a contradiction",
			pods: []pod{{"c", []podOpt{annotated(drain.SkipAnnotation, "true"), annotated(drain.WaitForCompletionAnnotation, "true")}}},
			err:  []string{"/c: annotations drain.slipway.dev/skip and drain.slipway.dev/wait-for-completion are both"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			for _, p := range tc.pods {
				f.pod(p.name, p.opts...)
			}
			plan, err := drain.New(f.env.Kube, tc.opts).Plan(f.ctx, f.node)
			if len(tc.err) > 0 {
				if err == nil {
					t.Fatalf("Plan succeeded, want an error containing %q", tc.err)
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var groups []string
			for _, g := range plan.Groups {
				groups = append(groups, fmt.Sprintf("%d:%s", g.Order, names(g.Pods)))
			}
			var skipped []corev1.Pod
			for _, s := range plan.Skipped {
				skipped = append(skipped, s.Pod)
				if s.Reason == "" {
					t.Errorf("pod %s skipped without a reason", s.Pod.Name)
				}
			}
			for what, got := range map[string][2]string{
				"groups":  {strings.Join(groups, " "), tc.groups},
				"wait":    {names(plan.Wait), tc.wait},
				"skipped": {names(skipped), tc.skipped},
			} {
				if got[0] != got[1] {
					t.Errorf("%s = %q, want %q", what, got[0], got[1])
				}
			}
		})
	}
}

// TestPlanFinishedWaitForCompletion: a wait-for-completion pod that has finished holds nothing.
func TestPlanFinishedWaitForCompletion(t *testing.T) {
	f := setup(t)
	job := f.pod("job", annotated(drain.WaitForCompletionAnnotation, "true"))
	f.setPhase(job, corev1.PodSucceeded)
	p, err := drain.New(f.env.Kube, drain.Options{}).Pass(f.ctx, f.node)
	if err != nil || !p.Done {
		t.Fatalf("Pass = %+v, %v; want done", p, err)
	}
	f.wantStates(map[string]string{"job": "present"})
}

func names(pods []corev1.Pod) string {
	var n []string
	for _, p := range pods {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}
