package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// NodeMetadata is what a Node lacks of its host's labels, annotations and taints.
type NodeMetadata struct {
	Labels, Annotations map[string]string
	// Taints is the Node's whole taint list with the manifest's taints added or updated, set
	// only when that differs from the Node's.
	Taints []corev1.Taint
}

// Empty says whether the Node already has everything.
func (m NodeMetadata) Empty() bool {
	return len(m.Labels) == 0 && len(m.Annotations) == 0 && m.Taints == nil
}

// MissingMetadata compares a host's labels, annotations and taints with its Node. Apply adds
// and updates; it does not remove what is on the Node but not in the manifest, because other
// controllers and people label nodes too and nothing records which of them slipway set.
// Remove a label or taint dropped from the manifest with kubectl.
func MissingMetadata(h *v1beta1.Host, n *corev1.Node) NodeMetadata {
	var m NodeMetadata
	diff := func(want, have map[string]string) map[string]string {
		var out map[string]string
		for k, v := range want {
			if hv, ok := have[k]; !ok || hv != v {
				if out == nil {
					out = map[string]string{}
				}
				out[k] = v
			}
		}
		return out
	}
	m.Labels = diff(h.Labels, n.Labels)
	m.Annotations = diff(h.Annotations, n.Annotations)
	taints := append([]corev1.Taint(nil), n.Spec.Taints...)
	changed := false
	for _, t := range h.Taints {
		want := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		found := false
		for i, have := range taints {
			if have.Key == want.Key && have.Effect == want.Effect {
				found = true
				if have.Value != want.Value {
					taints[i].Value, changed = want.Value, true
				}
			}
		}
		if !found {
			taints, changed = append(taints, want), true
		}
	}
	if changed {
		m.Taints = taints
	}
	return m
}

// MetadataDrift names the manifest's hosts whose Node exists and lacks some of the host's
// labels, annotations or taints, sorted.
func (e *Env) MetadataDrift(ctx context.Context, c *kube.Client) ([]string, error) {
	var out []string
	for _, n := range e.Nodes {
		node, err := c.Kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", n.Name, err)
		}
		if !MissingMetadata(&n.Host, node).Empty() {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ApplyNodeMetadata gives a host's Node the labels, annotations and taints the manifest lists.
// The patch carries the Node's resourceVersion, so a taint list changed meanwhile by someone
// else is not overwritten: the step fails and the next apply computes it again.
func (e *Env) ApplyNodeMetadata(ctx context.Context, host string) error {
	n, c, err := e.nodeAndKube(ctx, host)
	if err != nil {
		return err
	}
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", host, err)
	}
	m := MissingMetadata(&n.Host, node)
	if m.Empty() {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": node.ResourceVersion,
		"labels":          m.Labels,
		"annotations":     m.Annotations,
	}}
	if m.Taints != nil {
		patch["spec"] = map[string]any{"taints": m.Taints}
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := c.Kube.CoreV1().Nodes().Patch(ctx, host, types.MergePatchType, data, metav1.PatchOptions{FieldManager: kube.FieldManager}); err != nil {
		return fmt.Errorf("updating labels, annotations and taints of node %s: %w", host, err)
	}
	e.logf(host, "node labels %d, annotations %d, taints updated: %t", len(m.Labels), len(m.Annotations), m.Taints != nil)
	return nil
}
