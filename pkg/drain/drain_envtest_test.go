package drain_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/slipway-dev/slipway/pkg/drain"
	"github.com/slipway-dev/slipway/test/envtest"
)

// fast keeps the tests' waits short; the defaults are for real clusters.
var fast = drain.Options{PollInterval: 50 * time.Millisecond,
	Backoff: wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Cap: 200 * time.Millisecond}}

// TestPassOrder steps a drain one Pass at a time, playing the kubelet by hand, so that each
// order's evictions can be seen to wait for the previous order's pods to be gone.
func TestPassOrder(t *testing.T) {
	f := setup(t)
	f.pod("proxy", order("-1"))
	f.pod("app-a")
	f.pod("app-b", order("0"))
	f.pod("db", order("5"))
	f.pod("agent", daemonSetPod)
	f.pod("static", mirror)
	opts := fast
	opts.GracePeriodSeconds = ptr(int64(7))
	d := drain.New(f.env.Kube, opts)
	pass := func(want drain.Progress) {
		t.Helper()
		got, err := d.Pass(f.ctx, f.node)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Pass = %+v, want %+v", got, want)
		}
	}

	pass(drain.Progress{Order: -1, Terminating: 1, Later: 3})
	f.wantStates(map[string]string{"proxy": "terminating", "app-a": "present", "app-b": "present", "db": "present"})
	p, err := f.env.Kube.CoreV1().Pods(f.ns).Get(f.ctx, "proxy", metav1.GetOptions{})
	if err != nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 7 {
		t.Errorf("proxy's deletion grace period = %v (err %v), want the option's 7s", p.DeletionGracePeriodSeconds, err)
	}
	pass(drain.Progress{Order: -1, Terminating: 1, Later: 3}) // still terminating: nothing more
	f.wantStates(map[string]string{"app-a": "present", "app-b": "present"})

	f.finish("proxy")
	pass(drain.Progress{Order: 0, Terminating: 2, Later: 1})
	f.wantStates(map[string]string{"app-a": "terminating", "app-b": "terminating", "db": "present"})

	f.finish("app-a")
	pass(drain.Progress{Order: 0, Terminating: 1, Later: 1})
	f.wantStates(map[string]string{"db": "present"})

	f.finish("app-b")
	pass(drain.Progress{Order: 5, Terminating: 1})
	f.finish("db")
	pass(drain.Progress{Done: true})
	f.wantStates(map[string]string{"agent": "present", "static": "present"})
}

// TestPassPDB: a PodDisruptionBudget's refusal (429) is reported as blocked, the pod untouched,
// until the budget allows the eviction.
func TestPassPDB(t *testing.T) {
	f := setup(t)
	f.pod("web")
	budget := f.pdb("web", 0)
	d := drain.New(f.env.Kube, fast)
	got, err := d.Pass(f.ctx, f.node)
	if err != nil || got != (drain.Progress{Blocked: 1}) {
		t.Fatalf("Pass = %+v, %v; want one eviction blocked", got, err)
	}
	if !strings.Contains(got.String(), "1 evictions refused") {
		t.Errorf("progress reads %q", got)
	}
	f.wantStates(map[string]string{"web": "present"})
	f.setPDB(budget, 1)
	if got, err = d.Pass(f.ctx, f.node); err != nil || got != (drain.Progress{Terminating: 1}) {
		t.Fatalf("Pass = %+v, %v; want the pod evicted", got, err)
	}
}

// TestDrain runs a whole drain with the test's kubelet finishing terminations, and checks from
// the API server's own event stream that no pod was evicted before every pod of a lower order
// was gone.
func TestDrain(t *testing.T) {
	f := setup(t)
	orders := map[string]int{"proxy": -1, "app-a": 0, "app-b": 0, "cache": 0, "db": 5, "late": 9}
	for name, o := range orders {
		opts := []podOpt{order(fmt.Sprint(o))}
		if name == "cache" {
			opts = append(opts, emptyDir, unmanaged)
		}
		f.pod(name, opts...)
	}
	f.pod("agent", daemonSetPod)
	f.pod("static", mirror)
	f.pod("keep", annotated(drain.SkipAnnotation, "true"))
	events := f.record()
	f.env.StartKubelet(t, f.ns, nil)

	opts := fast
	opts.DeleteEmptyDirData, opts.EvictUnmanaged, opts.Timeout = true, true, time.Minute
	if err := drain.New(f.env.Kube, opts).Drain(f.ctx, f.node); err != nil {
		t.Fatal(err)
	}
	for name := range orders {
		if s := f.state(name); s != "gone" {
			t.Errorf("pod %s is %s after the drain", name, s)
		}
	}
	f.wantStates(map[string]string{"agent": "present", "static": "present", "keep": "present"})
	node, err := f.env.Kube.CoreV1().Nodes().Get(f.ctx, f.node, metav1.GetOptions{})
	if err != nil || !node.Spec.Unschedulable {
		t.Errorf("node not cordoned after the drain (err %v)", err)
	}

	seq := events(func(seq []string) bool { return strings.Contains(strings.Join(seq, " "), "gone:late") })
	gone := map[string]bool{}
	for _, e := range seq {
		what, pod, _ := strings.Cut(e, ":")
		if what == "gone" {
			gone[pod] = true
			continue
		}
		for other, o := range orders {
			if o < orders[pod] && !gone[other] {
				t.Errorf("pod %s (order %d) was evicted before %s (order %d) was gone; events: %v", pod, orders[pod], other, o, seq)
			}
		}
	}
}

// record watches the namespace's pods and returns a function that waits until the sequence
// of "evicted:<pod>" and "gone:<pod>" events satisfies until, and returns it.
func (f *fixture) record() func(until func([]string) bool) []string {
	f.t.Helper()
	w, err := f.env.Kube.CoreV1().Pods(f.ns).Watch(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(w.Stop)
	var mu sync.Mutex
	var seq []string
	seen := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			switch {
			case ev.Type == watch.Deleted:
				seq = append(seq, "gone:"+p.Name)
			case !p.DeletionTimestamp.IsZero() && !seen[p.Name]:
				seen[p.Name] = true
				seq = append(seq, "evicted:"+p.Name)
			}
			mu.Unlock()
		}
	}()
	return func(until func([]string) bool) []string {
		var out []string
		envtest.Eventually(f.t, 30*time.Second, "the watch to see the drain", func() (bool, string) {
			mu.Lock()
			defer mu.Unlock()
			out = append([]string(nil), seq...)
			return until(out), fmt.Sprint(out)
		})
		return out
	}
}

// drainAsync runs Drain in the background and returns its result channel.
func drainAsync(d *drain.Drainer, ctx context.Context, node string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- d.Drain(ctx, node) }()
	return done
}

func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Drain did not return within a minute")
		return nil
	}
}

// TestDrainRetriesPDBRefusal: Drain keeps retrying an eviction the API server refuses with 429
// and finishes once the PodDisruptionBudget allows it.
func TestDrainRetriesPDBRefusal(t *testing.T) {
	f := setup(t)
	f.pod("web")
	budget := f.pdb("web", 0)
	f.env.StartKubelet(t, f.ns, nil)
	client, refused := f.counting()
	done := drainAsync(drain.New(client, fast), f.ctx, f.node)
	envtest.Eventually(t, 30*time.Second, "three refusals", func() (bool, string) {
		return refused.Load() >= 3, fmt.Sprintf("%d refusals", refused.Load())
	})
	f.wantStates(map[string]string{"web": "present"})
	select {
	case err := <-done:
		t.Fatalf("Drain returned %v while the budget refused the eviction", err)
	default:
	}
	f.setPDB(budget, 1)
	if err := result(t, done); err != nil {
		t.Fatal(err)
	}
	f.wantStates(map[string]string{"web": "gone"})
}

// TestDrainTimeout: a drain held by a PodDisruptionBudget or by a pod that never completes fails
// at the timeout, naming the pod.
func TestDrainTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  podOpt
		want string
	}{
		{"pdb", nil, "evicting pod %s/web: still refused when the drain ran out of time"},
		{"wait-for-completion", annotated(drain.WaitForCompletionAnnotation, "true"), "waiting for pods to complete: %s/web still there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			if tc.opt == nil {
				f.pod("web")
				f.pdb("web", 0)
			} else {
				f.pod("web", tc.opt)
			}
			opts := fast
			opts.Timeout = time.Second
			start := time.Now()
			err := drain.New(f.env.Kube, opts).Drain(f.ctx, f.node)
			if err == nil {
				t.Fatal("Drain succeeded")
			}
			for _, s := range []string{fmt.Sprintf("drain of node %s did not finish within 1s", f.node), fmt.Sprintf(tc.want, f.ns)} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if el := time.Since(start); el > 20*time.Second {
				t.Errorf("Drain took %s with a 1s timeout", el)
			}
			f.wantStates(map[string]string{"web": "present"})
		})
	}
}

// TestDrainWaitsForCompletion: a wait-for-completion pod is never evicted; the drain ends when
// it finishes by itself.
func TestDrainWaitsForCompletion(t *testing.T) {
	f := setup(t)
	job := f.pod("job", annotated(drain.WaitForCompletionAnnotation, "true"))
	f.pod("web")
	f.env.StartKubelet(t, f.ns, nil)
	done := drainAsync(drain.New(f.env.Kube, fast), f.ctx, f.node)
	envtest.Eventually(t, 30*time.Second, "web evicted", func() (bool, string) {
		s := f.state("web")
		return s == "gone", s
	})
	for range 10 { // the drain goes on waiting; the job is untouched
		select {
		case err := <-done:
			t.Fatalf("Drain returned %v before the job completed", err)
		case <-time.After(50 * time.Millisecond):
		}
		f.wantStates(map[string]string{"job": "present"})
	}
	f.setPhase(job, corev1.PodSucceeded)
	if err := result(t, done); err != nil {
		t.Fatal(err)
	}
	f.wantStates(map[string]string{"job": "present"})
}

// TestDrainRefuses: a pod the options do not allow to evict fails the drain before any eviction.
func TestDrainRefuses(t *testing.T) {
	f := setup(t)
	f.pod("web")
	f.pod("cache", emptyDir)
	err := drain.New(f.env.Kube, fast).Drain(f.ctx, f.node)
	if err == nil || !strings.Contains(err.Error(), "/cache: its emptyDir volumes (scratch) would lose their data") {
		t.Fatalf("Drain = %v, want the emptyDir refusal", err)
	}
	f.wantStates(map[string]string{"web": "present", "cache": "present"})
}

// TestCordon sets and clears spec.unschedulable, also when it is already as asked.
func TestCordon(t *testing.T) {
	f := setup(t)
	d := drain.New(f.env.Kube, fast)
	node, err := f.env.Kube.CoreV1().Nodes().Get(f.ctx, f.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, true, false} {
		if err := d.Cordon(f.ctx, node, want); err != nil {
			t.Fatal(err)
		}
		got, err := f.env.Kube.CoreV1().Nodes().Get(f.ctx, f.node, metav1.GetOptions{})
		if err != nil || got.Spec.Unschedulable != want || node.Spec.Unschedulable != want {
			t.Fatalf("after Cordon(%t): server says %t, node says %t (err %v)", want, got.Spec.Unschedulable, node.Spec.Unschedulable, err)
		}
	}
}
