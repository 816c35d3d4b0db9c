package probe

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/csr"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// etcdMembers lists the etcd members and their health.
func etcdMembers(ctx context.Context, in Input) ([]plan.EtcdMember, error) {
	ec, err := in.API.Etcd(ctx)
	if err != nil {
		return nil, err
	}
	defer ec.Close()
	ms, err := ec.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]plan.EtcdMember, 0, len(ms))
	for _, m := range ms {
		peer := ""
		if len(m.PeerURLs) > 0 {
			peer = m.PeerURLs[0]
		}
		out = append(out, plan.EtcdMember{ID: m.ID, Name: m.Name, PeerURL: peer, Healthy: m.Healthy, Alarms: m.Alarms})
	}
	return out, nil
}

// runningCNIs names, sorted, the CNIs slipway knows whose per-node pods exist in the cluster,
// whichever tool installed them: planning adopts the manifest's CNI when another tool did.
func runningCNIs(ctx context.Context, c *kube.Client) ([]string, error) {
	var out []string
	for _, cni := range addons.KnownCNIs() {
		ns, sel, _ := addons.CNIPodsOf(cni)
		list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("listing %s's pods (%s in %s): %w", cni, sel, ns, err)
		}
		if len(list.Items) > 0 {
			out = append(out, cni)
		}
	}
	return out, nil
}

// pendingCSRs reports whether any kubelet serving request of the nodes waits for approval.
func pendingCSRs(ctx context.Context, c *kube.Client, nodes []*inventory.Node) (bool, error) {
	names := map[string]bool{}
	for _, n := range nodes {
		names[n.Name] = true
	}
	list, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for i := range list.Items {
		if name, ok := csr.NodeName(&list.Items[i]); ok && names[name] && csr.Pending(&list.Items[i]) {
			return true, nil
		}
	}
	return false, nil
}

// metadataDrift names, sorted, the nodes whose Node exists and lacks some of the host's
// labels, annotations or taints.
func metadataDrift(ctx context.Context, c *kube.Client, nodes []*inventory.Node) ([]string, error) {
	var out []string
	for _, n := range nodes {
		node, err := c.Kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", n.Name, err)
		}
		if !inventory.MissingMetadata(&n.Host, node).Empty() {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// MachineDeploymentKubelets returns the kubelet version of every MachineDeployment in the
// workers' namespace; none when the cluster has no machine-controller CRDs yet.
func MachineDeploymentKubelets(ctx context.Context, c *kube.Client) (map[string]string, error) {
	out := map[string]string{}
	gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
	list, err := c.Dynamic.Resource(gvr).Namespace(workers.Namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("listing MachineDeployments in %s: %w", workers.Namespace, err)
	}
	for _, md := range list.Items {
		v, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "versions", "kubelet")
		out[md.GetName()] = v
	}
	return out, nil
}
