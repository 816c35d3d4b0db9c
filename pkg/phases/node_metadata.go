package phases

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The node-metadata phase gives a host's Node the labels, annotations and taints the manifest
// lists (inventory.MissingMetadata says what is missing; nothing else is removed). The patch
// carries the Node's resourceVersion, so a taint list changed meanwhile by someone else is not
// overwritten: the step fails and the next apply computes it again. Joins and init-finish end
// with the same work.
var _ = register(Phase{
	Name:  plan.StepNodeMetadata,
	Short: "add the manifest's labels, annotations and taints to a host's Node",
	Run:   func(ctx context.Context, r *Run, host string) error { return applyNodeMetadata(ctx, r, host) },
})

// nodeMetadataRun is what updating a Node's metadata reads of a run.
type nodeMetadataRun interface {
	nodes
	api
	logger
}

func applyNodeMetadata(ctx context.Context, r nodeMetadataRun, host string) error {
	n, c, err := nodeAndKube(ctx, r, host)
	if err != nil {
		return err
	}
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", host, err)
	}
	m := inventory.MissingMetadata(&n.Host, node)
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
	r.Logf(host, "node labels %d, annotations %d, taints updated: %t", len(m.Labels), len(m.Annotations), m.Taints != nil)
	return nil
}
