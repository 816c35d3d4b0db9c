package drain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Options say which pods a drain may evict and how long it may take.
type Options struct {
	// DeleteEmptyDirData allows evicting pods with emptyDir volumes, whose data is lost.
	DeleteEmptyDirData bool
	// EvictUnmanaged allows evicting pods that no controller owns and nothing will recreate.
	EvictUnmanaged bool
	// GracePeriodSeconds overrides the pods' own termination grace period when set.
	GracePeriodSeconds *int64
	// Timeout bounds Drain; 0 means no bound but the context's.
	Timeout time.Duration
	// PollInterval is how often Drain checks whether evicted pods are gone; default 1s.
	PollInterval time.Duration
	// Backoff paces Drain's retries of evictions a PodDisruptionBudget refused; default 1s,
	// doubling up to 30s, with 10% jitter. Retries go on until the timeout.
	Backoff wait.Backoff
}

// Drainer cordons and drains Nodes.
type Drainer struct {
	client kubernetes.Interface
	opts   Options
}

// New returns a Drainer that talks to the API server through client.
func New(client kubernetes.Interface, opts Options) *Drainer {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Backoff.Duration <= 0 {
		opts.Backoff = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Cap: 30 * time.Second}
	}
	opts.Backoff.Steps = math.MaxInt32 // a DelayFunc keeps returning Cap after the last step
	return &Drainer{client: client, opts: opts}
}

// Cordon sets the node's spec.unschedulable, patching only when it differs, and updates node.
func (d *Drainer) Cordon(ctx context.Context, node *corev1.Node, unschedulable bool) error {
	if node.Spec.Unschedulable == unschedulable {
		return nil
	}
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
	got, err := d.client.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("setting unschedulable=%t on node %s: %w", unschedulable, node.Name, err)
	}
	node.Spec.Unschedulable = got.Spec.Unschedulable
	return nil
}

// Drain cordons the node and evicts its pods order by order, retrying evictions that a
// PodDisruptionBudget refuses, then waits for the pods annotated wait-for-completion. It returns
// when nothing is left to wait for, or fails when Options.Timeout or ctx ends first.
func (d *Drainer) Drain(ctx context.Context, nodeName string) error {
	if d.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.opts.Timeout)
		defer cancel()
	}
	node, err := d.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting node %s: %w", nodeName, err)
	}
	if err := d.Cordon(ctx, node, true); err != nil {
		return err
	}
	for {
		plan, err := d.Plan(ctx, nodeName)
		if err != nil {
			return d.timedOut(ctx, nodeName, err)
		}
		if len(plan.Groups) == 0 {
			return d.timedOut(ctx, nodeName, d.waitFor(ctx, nodeName, plan.Wait, "to complete", finished))
		}
		g := plan.Groups[0]
		if err := d.evictAll(ctx, g.Pods); err != nil {
			return d.timedOut(ctx, nodeName, err)
		}
		gone := func(*corev1.Pod) bool { return false }
		if err := d.waitFor(ctx, nodeName, g.Pods, fmt.Sprintf("of order %d to be gone", g.Order), gone); err != nil {
			return d.timedOut(ctx, nodeName, err)
		}
	}
}

// timedOut names the drain's deadline in err when it is what ended the drain.
func (d *Drainer) timedOut(ctx context.Context, nodeName string, err error) error {
	if err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) || d.opts.Timeout <= 0 {
		return err
	}
	return fmt.Errorf("drain of node %s did not finish within %s: %w", nodeName, d.opts.Timeout, err)
}

// evictAll evicts the pods together, each retrying while a PodDisruptionBudget refuses it.
func (d *Drainer) evictAll(ctx context.Context, pods []corev1.Pod) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range pods {
		pod := &pods[i]
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		g.Go(func() error { return d.evictWithRetry(ctx, pod) })
	}
	return g.Wait()
}

func (d *Drainer) evictWithRetry(ctx context.Context, pod *corev1.Pod) error {
	var refused error
	err := d.opts.Backoff.DelayFunc().Until(ctx, true, false, func(ctx context.Context) (bool, error) {
		err := d.Evict(ctx, pod)
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return true, nil
		case apierrors.IsTooManyRequests(err):
			refused = err
			return false, nil
		}
		return false, err
	})
	if err != nil && refused != nil && ctx.Err() != nil {
		return fmt.Errorf("evicting pod %s: still refused when the drain ran out of time: %w", name(pod), refused)
	}
	return err
}

// Evict asks the API server to evict the pod. A 429 means a PodDisruptionBudget refused it.
func (d *Drainer) Evict(ctx context.Context, pod *corev1.Pod) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: d.opts.GracePeriodSeconds}}
	if err := d.client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, ev); err != nil {
		return fmt.Errorf("evicting pod %s: %w", name(pod), err)
	}
	return nil
}

// waitFor polls the pods on the node until each of pods is gone (by UID) or done says so.
func (d *Drainer) waitFor(ctx context.Context, nodeName string, pods []corev1.Pod, what string, done func(*corev1.Pod) bool) error {
	if len(pods) == 0 {
		return nil
	}
	var left []string
	err := wait.PollUntilContextCancel(ctx, d.opts.PollInterval, true, func(ctx context.Context) (bool, error) {
		now, err := d.podsOn(ctx, nodeName)
		if err != nil {
			return false, err
		}
		byUID := map[types.UID]*corev1.Pod{}
		for i := range now {
			byUID[now[i].UID] = &now[i]
		}
		left = left[:0]
		for _, p := range pods {
			if cur, ok := byUID[p.UID]; ok && !done(cur) {
				left = append(left, name(&p))
			}
		}
		return len(left) == 0, nil
	})
	if err != nil && ctx.Err() != nil && len(left) > 0 {
		// Name the deadline, not the request it happened to cut short.
		return fmt.Errorf("waiting for pods %s: %s still there: %w", what, strings.Join(left, ", "), ctx.Err())
	}
	return err
}
