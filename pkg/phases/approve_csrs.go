package phases

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/csr"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The approve-csrs phase approves the kubelet serving certificate requests of the manifest's
// hosts whose names and addresses are the host's own (csr.CheckServing), and waits until every
// host that has joined has one approved. Requests for names slipway does not manage are left
// alone, and a request that claims a name or address its host does not have is not approved.
var _ = register(Phase{
	Name:  plan.StepApproveCSRs,
	Short: "approve the kubelet serving certificates of the manifest's hosts",
	Run:   func(ctx context.Context, r *Run, _ string) error { return approveCSRs(ctx, r) },
})

// approveCSRsRun is what approving certificate requests reads of a run.
type approveCSRsRun interface {
	api
	logger
	Nodes() []*inventory.Node
}

func approveCSRs(ctx context.Context, r approveCSRsRun) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	addrs := map[string][]corev1.NodeAddress{}
	for _, n := range r.Nodes() {
		var a []corev1.NodeAddress
		for _, ip := range []string{n.Host.PrivateAddress, n.Host.PublicAddress} {
			if net.ParseIP(ip) != nil {
				a = append(a, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
			} else if ip != "" {
				a = append(a, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: ip})
			}
		}
		addrs[n.Name] = a
	}
	return kube.Wait(ctx, "kubelet serving certificate requests of every node", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		nodeList, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		list, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		approved := map[string]bool{}
		for i := range list.Items {
			req := &list.Items[i]
			name, ok := csr.NodeName(req)
			if !ok || addrs[name] == nil {
				continue
			}
			if !csr.Pending(req) {
				approved[name] = approved[name] || isApproved(req)
				continue
			}
			if err := csr.CheckServing(req, name, addrs[name]); err != nil {
				r.Logf(name, "not approving %s: %v", req.Name, err)
				continue
			}
			req.Status.Conditions = append(req.Status.Conditions, certv1.CertificateSigningRequestCondition{
				Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "SlipwayHostMatch",
				Message: "names and addresses belong to host " + name + " of the cluster manifest", LastUpdateTime: metav1.Now(),
			})
			if _, err := c.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, req.Name, req, metav1.UpdateOptions{}); err != nil {
				return false, "", fmt.Errorf("approving %s: %w", req.Name, err)
			}
			r.Logf(name, "approved kubelet serving certificate request %s", req.Name)
			approved[name] = true
		}
		var missing []string
		for _, n := range nodeList.Items {
			if addrs[n.Name] != nil && !approved[n.Name] {
				missing = append(missing, n.Name)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			return false, "no approved serving certificate yet for " + strings.Join(missing, ", "), nil
		}
		return true, "", nil
	})
}

func isApproved(r *certv1.CertificateSigningRequest) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == certv1.CertificateApproved {
			return true
		}
	}
	return false
}
