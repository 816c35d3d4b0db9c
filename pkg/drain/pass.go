package drain

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Progress says where a drain stands after one Pass.
type Progress struct {
	// Done is true when no pod is left to evict or to wait for.
	Done bool
	// Order is the drain order being evicted.
	Order int
	// Terminating counts the pods of that order evicted and not gone yet.
	Terminating int
	// Blocked counts the evictions a PodDisruptionBudget refused in this pass.
	Blocked int
	// Later counts the pods of higher orders, evicted once the current order is gone.
	Later int
	// Waiting counts the pods annotated wait-for-completion that still run.
	Waiting int
}

func (p Progress) String() string {
	if p.Done {
		return "drained"
	}
	s := fmt.Sprintf("%d pods terminating, %d evictions refused (PodDisruptionBudget)", p.Terminating, p.Blocked)
	if p.Later > 0 {
		s += fmt.Sprintf(", %d pods of later drain orders", p.Later)
	}
	if p.Waiting > 0 {
		s += fmt.Sprintf(", %d pods to complete by themselves", p.Waiting)
	}
	return s
}

// Pass makes one step of a drain without waiting: it evicts the pods of the lowest order still
// on the node that are not terminating yet, trying each once, and reports what is left. A
// controller calls it on every reconcile until Done, instead of blocking a worker in Drain; the
// node should be cordoned first. It does not look at Options.Timeout: the caller keeps time.
func (d *Drainer) Pass(ctx context.Context, nodeName string) (Progress, error) {
	plan, err := d.Plan(ctx, nodeName)
	if err != nil {
		return Progress{}, err
	}
	p := Progress{Waiting: len(plan.Wait)}
	if len(plan.Groups) == 0 {
		p.Done = p.Waiting == 0
		return p, nil
	}
	g := plan.Groups[0]
	p.Order = g.Order
	for _, later := range plan.Groups[1:] {
		p.Later += len(later.Pods)
	}
	var errs []error
	for i := range g.Pods {
		pod := &g.Pods[i]
		if !pod.DeletionTimestamp.IsZero() {
			p.Terminating++
			continue
		}
		err := d.Evict(ctx, pod)
		switch {
		case err == nil || apierrors.IsNotFound(err):
			p.Terminating++
		case apierrors.IsTooManyRequests(err):
			p.Blocked++
		default:
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}
