package drain

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// The per-Pod drain rules; see the package documentation.
const (
	SkipAnnotation              = "drain.slipway.dev/skip"
	OrderAnnotation             = "drain.slipway.dev/order"
	WaitForCompletionAnnotation = "drain.slipway.dev/wait-for-completion"
)

// Group is the pods of one drain order.
type Group struct {
	Order int
	Pods  []corev1.Pod
}

// Skipped is a pod the drain leaves on the node, and why.
type Skipped struct {
	Pod    corev1.Pod
	Reason string
}

// Plan is what a drain would do with the pods on a node now.
type Plan struct {
	// Groups holds the pods to evict (or already terminating) by order, lowest first.
	Groups []Group
	// Wait holds the running pods whose completion the drain waits for.
	Wait []corev1.Pod
	// Skipped holds the pods left on the node.
	Skipped []Skipped
}

// Plan lists the pods on the node and sorts them. It fails, naming every pod at fault, when a
// pod's annotations are invalid or the options refuse to evict a pod.
func (d *Drainer) Plan(ctx context.Context, nodeName string) (*Plan, error) {
	pods, err := d.podsOn(ctx, nodeName)
	if err != nil {
		return nil, err
	}
	p := &Plan{}
	orders := map[int][]corev1.Pod{}
	var errs []error
	for _, pod := range pods {
		r, err := rulesOf(&pod)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if why := skipReason(&pod, r); why != "" {
			p.Skipped = append(p.Skipped, Skipped{Pod: pod, Reason: why})
			continue
		}
		if r.waitForCompletion {
			if !finished(&pod) {
				p.Wait = append(p.Wait, pod)
			}
			continue
		}
		if err := d.refusal(&pod); err != nil {
			errs = append(errs, err)
			continue
		}
		orders[r.order] = append(orders[r.order], pod)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("draining node %s: %w", nodeName, err)
	}
	for _, o := range slices.Sorted(maps.Keys(orders)) {
		p.Groups = append(p.Groups, Group{Order: o, Pods: orders[o]})
	}
	return p, nil
}

// podsOn lists the pods bound to the node, sorted by namespace and name.
func (d *Drainer) podsOn(ctx context.Context, nodeName string) ([]corev1.Pod, error) {
	list, err := d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", nodeName).String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods on node %s: %w", nodeName, err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return list.Items, nil
}

// rules are a pod's drain annotations, parsed.
type rules struct {
	skip, waitForCompletion bool
	order                   int
}

func rulesOf(pod *corev1.Pod) (rules, error) {
	var r rules
	var errs []error
	a := pod.Annotations
	parseBool := func(key string, dst *bool) {
		v, ok := a[key]
		if !ok {
			return
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: invalid value %q: must be \"true\" or \"false\"", name(pod), key, v))
		}
		*dst = b
	}
	parseBool(SkipAnnotation, &r.skip)
	parseBool(WaitForCompletionAnnotation, &r.waitForCompletion)
	if v, ok := a[OrderAnnotation]; ok {
		o, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: annotation %s: invalid value %q: must be an integer", name(pod), OrderAnnotation, v))
		}
		r.order = o
	}
	if r.skip && r.waitForCompletion {
		errs = append(errs, fmt.Errorf("pod %s: annotations %s and %s are both \"true\"; choose one", name(pod), SkipAnnotation, WaitForCompletionAnnotation))
	}
	return r, errors.Join(errs...)
}

// skipReason says why the drain leaves the pod alone, or "".
func skipReason(pod *corev1.Pod, r rules) string {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return "mirror pod of a static pod"
	}
	if c := metav1.GetControllerOf(pod); c != nil && c.Kind == "DaemonSet" && strings.HasPrefix(c.APIVersion, "apps/") {
		return "controlled by DaemonSet " + c.Name
	}
	if r.skip {
		return "annotated " + SkipAnnotation
	}
	return ""
}

// refusal says why the options forbid evicting the pod, or nil.
func (d *Drainer) refusal(pod *corev1.Pod) error {
	if !pod.DeletionTimestamp.IsZero() || finished(pod) {
		return nil
	}
	if !d.opts.DeleteEmptyDirData {
		var dirs []string
		for _, v := range pod.Spec.Volumes {
			if v.EmptyDir != nil {
				dirs = append(dirs, v.Name)
			}
		}
		if len(dirs) > 0 {
			return fmt.Errorf("pod %s: its emptyDir volumes (%s) would lose their data; allow it with DeleteEmptyDirData",
				name(pod), strings.Join(dirs, ", "))
		}
	}
	if !d.opts.EvictUnmanaged && metav1.GetControllerOf(pod) == nil {
		return fmt.Errorf("pod %s: no controller owns it, so nothing would recreate it elsewhere; allow it with EvictUnmanaged", name(pod))
	}
	return nil
}

func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func name(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }
