// Package pools reports on the cluster's worker pools (MachineDeployments) from slipway's side:
// how far each of their Machines has come (server ACTIVE, address, Node registered, Ready) and
// how long each took, read from the Machines, their MachineSets and their Nodes. Wait polls that
// until every pool has its replicas Ready, printing each Machine's progress, and when it gives
// up says, per Machine that did not make it, its phase, its conditions and the tail of its
// server's console log. The package reads the cluster and (for console logs) the cloud; it
// changes neither.
package pools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// Pool is one MachineDeployment and its Machines.
type Pool struct {
	Name string `json:"name"`
	// Replicas is the MachineDeployment's spec.replicas, and Ready how many of its Machines are
	// Ready Nodes.
	Replicas int32 `json:"replicas"`
	Ready    int32 `json:"ready"`
	// Missing is true when the MachineDeployment does not exist.
	Missing  bool      `json:"missing,omitempty"`
	Machines []Machine `json:"machines"`

	// settled means the MachineDeployment's status describes its current spec, with every
	// replica updated and ready and no Machine more.
	settled bool
}

// Done reports whether the pool has its replicas, each a Ready Node, and the controller's
// status of the MachineDeployment says so too.
func (p Pool) Done() bool {
	return !p.Missing && p.settled && p.Ready == p.Replicas && int32(len(p.Machines)) == p.Replicas
}

// Machine is one Machine of a pool.
type Machine struct {
	Name       string `json:"name"`
	Phase      string `json:"phase,omitempty"`
	ProviderID string `json:"providerID,omitempty"`
	Address    string `json:"address,omitempty"`
	// Node is the Machine's Node (status.nodeRef), once registered.
	Node  string `json:"node,omitempty"`
	Ready bool   `json:"ready"`
	// Elapsed is how long the Machine took from its creation to a Ready Node, or, while it is
	// not Ready, how long it has existed; ElapsedSeconds is the same in whole seconds.
	Elapsed        string `json:"elapsed"`
	ElapsedSeconds int64  `json:"elapsedSeconds"`

	// milestones are the steps the Machine has reached, in order, with when.
	milestones []milestone
	conditions []metav1.Condition
	failure    string // the controller's terminal error, "reason: message"
	object     *v1alpha1.Machine
}

// Status reads the named MachineDeployments of namespace and their Machines, in the order of
// names. A MachineDeployment that does not exist (or a cluster without the machine-controller's
// CRDs) is reported as Missing.
func Status(ctx context.Context, c *kube.Client, namespace string, names []string) ([]Pool, error) {
	if len(names) == 0 {
		return []Pool{}, nil
	}
	now := time.Now()
	var mds v1alpha1.MachineDeploymentList
	var sets v1alpha1.MachineSetList
	var machines v1alpha1.MachineList
	for _, l := range []struct {
		resource string
		into     any
	}{{"machinedeployments", &mds}, {"machinesets", &sets}, {"machines", &machines}} {
		missing, err := list(ctx, c, namespace, l.resource, l.into)
		if err != nil {
			return nil, err
		}
		if missing {
			out := make([]Pool, len(names))
			for i, n := range names {
				out[i] = Pool{Name: n, Missing: true, Machines: []Machine{}}
			}
			return out, nil
		}
	}
	deployments := map[string]*v1alpha1.MachineDeployment{}
	for i := range mds.Items {
		deployments[mds.Items[i].Name] = &mds.Items[i]
	}
	deploymentOfSet := map[string]string{}
	for _, s := range sets.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && ref.Kind == "MachineDeployment" {
			deploymentOfSet[s.Name] = ref.Name
		}
	}
	byPool := map[string][]*v1alpha1.Machine{}
	for i := range machines.Items {
		m := &machines.Items[i]
		ref := metav1.GetControllerOf(m)
		if ref == nil || ref.Kind != "MachineSet" || !m.DeletionTimestamp.IsZero() {
			continue
		}
		if md := deploymentOfSet[ref.Name]; md != "" {
			byPool[md] = append(byPool[md], m)
		}
	}
	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	nodeByName := map[string]*corev1.Node{}
	for i := range nodes.Items {
		nodeByName[nodes.Items[i].Name] = &nodes.Items[i]
	}
	out := make([]Pool, 0, len(names))
	for _, name := range names {
		md, ok := deployments[name]
		if !ok {
			out = append(out, Pool{Name: name, Missing: true, Machines: []Machine{}})
			continue
		}
		p := Pool{Name: name, Replicas: Replicas(md), Machines: []Machine{}, settled: settled(md)}
		ms := byPool[name]
		slices.SortFunc(ms, func(a, b *v1alpha1.Machine) int { return strings.Compare(a.Name, b.Name) })
		for _, m := range ms {
			var node *corev1.Node
			if m.Status.NodeRef != nil {
				node = nodeByName[m.Status.NodeRef.Name]
			}
			pm := machine(m, node, now)
			if pm.Ready {
				p.Ready++
			}
			p.Machines = append(p.Machines, pm)
		}
		out = append(out, p)
	}
	return out, nil
}

// list reads a resource of the machine-controller's API group into into; missing is true when
// the cluster does not serve it.
func list(ctx context.Context, c *kube.Client, namespace, resource string, into any) (missing bool, err error) {
	gvr := v1alpha1.GroupVersion.WithResource(resource)
	l, err := c.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("listing %s in %s: %w", resource, namespace, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.UnstructuredContent(), into); err != nil {
		return false, fmt.Errorf("reading %s: %w", resource, err)
	}
	return false, nil
}

// Replicas is a MachineDeployment's spec.replicas, whose default is 1.
func Replicas(md *v1alpha1.MachineDeployment) int32 {
	if md.Spec.Replicas == nil {
		return 1
	}
	return *md.Spec.Replicas
}

// settled reports whether the controller's status of md describes its current spec, with every
// replica updated and ready and no Machine more (a rollout or scale-down has finished).
func settled(md *v1alpha1.MachineDeployment) bool {
	want, s := Replicas(md), md.Status
	return s.ObservedGeneration >= md.Generation && s.Replicas == want && s.UpdatedReplicas >= want && s.ReadyReplicas >= want
}

// Settled reports whether a MachineDeployment's status says all its replicas are updated and
// Ready: what the probe reads to decide whether apply must wait for the pool.
func Settled(md *v1alpha1.MachineDeployment) bool { return settled(md) }
