package machine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/index"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
)

// findNode returns the Machine's Node: by the provider ID of inst, the server the cloud
// confirmed as the Machine's, first, by inst's addresses only as a fallback (for clouds whose
// kubelets register without a provider ID), and never a Node that another Machine already
// claimed. Without inst it is only the Node the controller linked. The Machine's status (its
// addresses, its nodeRef) never picks a Node: whoever may write machines/status could point it
// at any Node.
func (r *Reconciler) findNode(ctx context.Context, m *v1alpha1.Machine, inst *cloud.Instance) (*corev1.Node, error) {
	if inst == nil {
		return r.linkedNode(ctx, m)
	}
	key := m.Namespace + "/" + m.Name
	ok := func(n *corev1.Node) bool {
		owner := n.Annotations[v1alpha1.NodeMachineAnnotation]
		return owner == "" || owner == key
	}
	var nodes corev1.NodeList
	if inst.ProviderID != "" {
		if err := r.client.List(ctx, &nodes, client.MatchingFields{index.ProviderID: inst.ProviderID}); err != nil {
			return nil, fmt.Errorf("listing nodes by provider ID: %w", err)
		}
		for i := range nodes.Items {
			if ok(&nodes.Items[i]) {
				return &nodes.Items[i], nil
			}
		}
	}
	for _, a := range inst.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		if err := r.client.List(ctx, &nodes, client.MatchingFields{index.Address: a.Address}); err != nil {
			return nil, fmt.Errorf("listing nodes by address: %w", err)
		}
		for i := range nodes.Items {
			// A Node with a different provider ID is another server that reused the address.
			n := &nodes.Items[i]
			if ok(n) && (n.Spec.ProviderID == "" || n.Spec.ProviderID == inst.ProviderID) {
				return n, nil
			}
		}
	}
	return r.linkedNode(ctx, m)
}

// linkedNode returns the Node this controller linked to the Machine when the cloud confirmed
// its server (the nodelink annotation, by UID), if it still exists and still names the
// Machine's server.
func (r *Reconciler) linkedNode(ctx context.Context, m *v1alpha1.Machine) (*corev1.Node, error) {
	link := nodelink.Of(m)
	if link == nil {
		return nil, nil
	}
	n := &corev1.Node{}
	err := r.client.Get(ctx, client.ObjectKey{Name: link.Name}, n)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting node %s: %w", link.Name, err)
	case !link.Matches(m, n):
		return nil, nil
	}
	return n, nil
}

// ownedNode returns the Node that deleting the Machine may cordon, drain and delete: the Node
// this controller linked when the cloud confirmed the server (the nodelink annotation, the same
// UID and provider ID), or else one whose server the cloud confirms as the Machine's own now
// (the provider checks the server's metadata, whatever spec.providerID says). Neither a Node
// that merely carries the providerID a Machine names, nor the one its status.nodeRef names, is
// ever enough: that would let whoever may write the providerID, or machines/status, drain and
// delete any Node. The linked Node needs no cloud call, on each of the delete's polls.
func (r *Reconciler) ownedNode(ctx context.Context, m *v1alpha1.Machine) (*corev1.Node, error) {
	if n, err := r.linkedNode(ctx, m); n != nil || err != nil {
		return n, err
	}
	inst, err := r.cloud.Get(ctx, m)
	if err != nil {
		return nil, nil
	}
	return r.findNode(ctx, m, inst)
}

// link records node as the Machine's (the nodelink annotation) with the server's addresses as
// the cloud reported them; a Node followed on recorded data (the cloud did not answer) keeps
// the addresses recorded before. It reports whether the Node is newly linked.
func (r *Reconciler) link(ctx context.Context, s *machineScope, node *corev1.Node) (bool, error) {
	m := s.m
	old := nodelink.Of(m)
	l := &nodelink.Link{Node: node.UID, Name: node.Name, Addresses: s.inst.Addresses}
	if m.Spec.ProviderID != nil {
		l.ProviderID = *m.Spec.ProviderID
	}
	if s.recorded {
		l.Addresses = nil
		if old != nil {
			l.Addresses = old.Addresses
		}
	}
	fresh := old == nil || old.Node != node.UID
	cp := m.DeepCopy()
	if !nodelink.Set(cp, l) {
		return fresh, nil
	}
	// A merge patch of the one annotation: it changes nothing else the Machine holds.
	if err := r.client.Patch(ctx, cp, client.MergeFrom(m)); err != nil {
		return false, fmt.Errorf("recording node %s as machine %s/%s's: %w", node.Name, m.Namespace, m.Name, err)
	}
	m.Annotations, m.ResourceVersion = cp.Annotations, cp.ResourceVersion
	return fresh, nil
}

// reconcileNode links the Machine and its Node and keeps the Node's metadata as the template says.
func (r *Reconciler) reconcileNode(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.m
	if s.inst == nil || s.inst.State != cloud.StateRunning {
		return ctrl.Result{}, nil
	}
	find := r.findNode
	if s.recorded {
		find = func(ctx context.Context, m *v1alpha1.Machine, _ *cloud.Instance) (*corev1.Node, error) {
			return r.linkedNode(ctx, m)
		}
	}
	node, err := find(ctx, m, s.inst)
	if err != nil {
		return ctrl.Result{}, err
	}
	if node == nil {
		if m.Status.NodeRef != nil {
			conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeReady, metav1.ConditionFalse, "NodeNotFound",
				fmt.Sprintf("node %s is gone", m.Status.NodeRef.Name))
		} else {
			conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeJoined, metav1.ConditionFalse, "WaitingForNode",
				"the server runs; waiting for its kubelet to register")
			if identityChanged(s.orig, m) {
				// The Node watch finds a Machine through its provider ID and addresses in the
				// cache. A kubelet that registered while this reconcile was recording them was
				// mapped to no Machine, and this reconcile's Node cache may not hold it yet:
				// look once more when both caches have caught up.
				return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
			}
		}
		return ctrl.Result{}, nil
	}
	s.node = node
	fresh, err := r.link(ctx, s, node)
	if err != nil {
		return ctrl.Result{}, err
	}
	if fresh {
		// The token has done its job once the Node exists; a leaked token is a standing invitation.
		if err := r.deleteToken(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	// status.nodeRef says it for people and tools; nothing here reads it back as a fact.
	if ref := m.Status.NodeRef; ref == nil || ref.UID != node.UID || ref.Name != node.Name {
		m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node.Name, UID: node.UID}
	}
	waiting, err := r.syncNode(ctx, m, node)
	if err != nil {
		if apierrors.IsConflict(err) {
			// The kubelet updated the Node meanwhile; the next reconcile starts from its version.
			return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
		}
		return ctrl.Result{}, err
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeJoined, metav1.ConditionTrue, "NodeJoined", "")
	if nodeReady(node) && !hasTaint(node, v1alpha1.NotReadyTaintKey) {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeReady, metav1.ConditionTrue, "NodeReady", "")
	} else if waiting != "" {
		// Nothing watches the CNI's pods: look again shortly.
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeReady, metav1.ConditionFalse, "PodNetworkNotReady", waiting)
		return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
	} else {
		msg := "the kubelet does not report Ready"
		if c := nodeCondition(node, corev1.NodeReady); c != nil && c.Message != "" {
			msg = c.Message
		}
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineNodeReady, metav1.ConditionFalse, "NodeNotReady", msg)
	}
	if v := node.Status.NodeInfo.KubeletVersion; v != "" {
		m.Status.Versions = &v1alpha1.MachineVersionInfo{Kubelet: v}
	}
	return ctrl.Result{}, nil
}

// syncNode annotates the Node with its Machine, keeps on it the labels, annotations and taints
// the Machine's spec gives (and removes those it gave before and no longer does), and lifts the
// not-ready taint once the Node is Ready with a working pod network. While the Node is Ready but
// its network is not, it says what it waits for.
func (r *Reconciler) syncNode(ctx context.Context, m *v1alpha1.Machine, node *corev1.Node) (waiting string, err error) {
	orig := node.DeepCopy()
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	gaveLabels := fromMachine(node, v1alpha1.NodeLabelsFromMachineAnnotation)
	gaveAnnotations := fromMachine(node, v1alpha1.NodeAnnotationsFromMachineAnnotation)
	gaveTaints := fromMachine(node, v1alpha1.NodeTaintsFromMachineAnnotation)
	syncMap(node.Labels, m.Spec.Labels, gaveLabels)
	syncMap(node.Annotations, m.Spec.Annotations, gaveAnnotations)
	node.Spec.Taints = syncTaints(node.Spec.Taints, m.Spec.Taints, gaveTaints)
	node.Annotations[v1alpha1.NodeMachineAnnotation] = m.Namespace + "/" + m.Name
	recordGiven(node, v1alpha1.NodeLabelsFromMachineAnnotation, slices.Collect(maps.Keys(m.Spec.Labels)))
	recordGiven(node, v1alpha1.NodeAnnotationsFromMachineAnnotation, slices.Collect(maps.Keys(m.Spec.Annotations)))
	var taints []string
	for _, t := range m.Spec.Taints {
		taints = append(taints, taintID(t))
	}
	recordGiven(node, v1alpha1.NodeTaintsFromMachineAnnotation, taints)
	if len(node.Labels) == 0 && orig.Labels == nil {
		node.Labels = nil
	}
	lift := nodeReady(node)
	if lift && hasTaint(node, v1alpha1.NotReadyTaintKey) {
		if waiting, err = r.podNetworkWaiting(ctx, node); err != nil {
			return "", err
		}
		lift = waiting == ""
	}
	if lift {
		kept := node.Spec.Taints[:0:0]
		for _, t := range node.Spec.Taints {
			if t.Key != v1alpha1.NotReadyTaintKey {
				kept = append(kept, t)
			}
		}
		node.Spec.Taints = kept
	}
	if equality.Semantic.DeepEqual(orig.ObjectMeta, node.ObjectMeta) && equality.Semantic.DeepEqual(orig.Spec, node.Spec) {
		return waiting, nil
	}
	// Optimistic locking: the taint list is replaced whole, and must not undo a concurrent change.
	if err := r.client.Patch(ctx, node, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return "", fmt.Errorf("updating node %s of machine %s/%s: %w", node.Name, m.Namespace, m.Name, err)
	}
	return waiting, nil
}

// podNetworkWaiting says what a Ready Node's pod network still waits for, or "" when it works:
// the CNI's pod on the Node (the node settings' cniPods) runs and is ready. A kubelet reports
// Ready as soon as a CNI configuration file exists, which can be before the CNI's agent on the
// node has set up its part of the network. Without cniPods (an external CNI) Ready is enough.
func (r *Reconciler) podNetworkWaiting(ctx context.Context, node *corev1.Node) (string, error) {
	s, err := r.recentNodeSettings(ctx)
	if err != nil {
		return "", err
	}
	if s.CNIPods == nil {
		return "", nil
	}
	sel, err := labels.Parse(s.CNIPods.Selector)
	if err != nil {
		return "", fmt.Errorf("the node settings' cniPods.selector %q: %w", s.CNIPods.Selector, err)
	}
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(s.CNIPods.Namespace), client.MatchingLabelsSelector{Selector: sel},
		client.MatchingFields{"spec.nodeName": node.Name}); err != nil {
		return "", fmt.Errorf("listing the CNI's pods on node %s: %w", node.Name, err)
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() && podReady(p) {
			return "", nil
		}
	}
	return fmt.Sprintf("the Node is Ready; waiting for the CNI's pod (%s in %s) to run and be ready on it", s.CNIPods.Selector, s.CNIPods.Namespace), nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// identityChanged says whether the Machine's provider ID or addresses differ from how it was read.
func identityChanged(orig, m *v1alpha1.Machine) bool {
	if orig == nil {
		return true
	}
	a, b := "", ""
	if orig.Spec.ProviderID != nil {
		a = *orig.Spec.ProviderID
	}
	if m.Spec.ProviderID != nil {
		b = *m.Spec.ProviderID
	}
	return a != b || !equality.Semantic.DeepEqual(orig.Status.Addresses, m.Status.Addresses)
}

// fromMachine returns the keys that the Node's annotation name lists (what its Machine gave it
// the last time), none for a Node without it (one the controller synced before it kept the lists).
func fromMachine(node *corev1.Node, name string) map[string]bool {
	out := map[string]bool{}
	for _, k := range strings.Split(node.Annotations[name], ",") {
		if k != "" {
			out[k] = true
		}
	}
	return out
}

// recordGiven keeps in the Node's annotation name the keys its Machine gives it now, sorted; no
// annotation for none.
func recordGiven(node *corev1.Node, name string, keys []string) {
	if len(keys) == 0 {
		delete(node.Annotations, name)
		return
	}
	slices.Sort(keys)
	node.Annotations[name] = strings.Join(keys, ",")
}

// syncMap sets on the Node's map have what the Machine's want holds, and removes what the
// Machine gave before (gave) and no longer does.
func syncMap(have, want map[string]string, gave map[string]bool) {
	for k := range gave {
		if _, ok := want[k]; !ok {
			delete(have, k)
		}
	}
	for k, v := range want {
		have[k] = v
	}
}

func taintID(t corev1.Taint) string { return t.Key + ":" + string(t.Effect) }

// syncTaints returns the Node's taints with the Machine's want in them (a taint of the same key
// and effect takes the Machine's value), without those the Machine gave before and no longer
// does; the others (the not-ready taint, the node lifecycle controller's) are kept in place.
func syncTaints(have, want []corev1.Taint, gave map[string]bool) []corev1.Taint {
	wanted := map[string]corev1.Taint{}
	for _, t := range want {
		wanted[taintID(t)] = t
	}
	out := have[:0:0]
	seen := map[string]bool{}
	for _, t := range have {
		id := taintID(t)
		if w, ok := wanted[id]; ok {
			t.Value = w.Value
			seen[id] = true
		} else if gave[id] {
			continue
		}
		out = append(out, t)
	}
	for _, t := range want {
		if !seen[taintID(t)] {
			out = append(out, t)
			seen[taintID(t)] = true
		}
	}
	if len(out) == 0 && have == nil {
		return nil
	}
	return out
}
