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
// such node's serving certificate is settled (servingSettled). Requests for names slipway does
// not manage are left alone, and a request that claims a name or address its host does not have
// is not approved.
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

// csrGarbageAge is how long kube-controller-manager keeps an approved certificate request
// (its CSR cleaner deletes them after an hour): a Node older than that with no request left has
// had its serving certificate since, and there is nothing of it to wait for.
const csrGarbageAge = time.Hour

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
	return kube.Wait(ctx, "kubelet serving certificates of every node", 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		nodeList, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		list, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		requests := map[string][]*certv1.CertificateSigningRequest{}
		for i := range list.Items {
			req := &list.Items[i]
			name, ok := csr.NodeName(req)
			if !ok || addrs[name] == nil {
				continue
			}
			if csr.Pending(req) {
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
			}
			requests[name] = append(requests[name], req)
		}
		var waiting []string
		for i := range nodeList.Items {
			n := &nodeList.Items[i]
			if addrs[n.Name] == nil {
				continue
			}
			if why := servingSettled(n, requests[n.Name], time.Now()); why != "" {
				waiting = append(waiting, n.Name+": "+why)
			}
		}
		sort.Strings(waiting)
		if len(waiting) > 0 {
			return false, strings.Join(waiting, "; "), nil
		}
		return true, "", nil
	})
}

// servingSettled says why node's serving certificate is not settled yet, or "" once it is: a
// signed request of the node asks for exactly what the kubelet asks for with the node's current
// addresses, so the kubelet, holding that certificate, will not ask again. A kubelet may ask
// both before and after its Node has all its addresses (or after a cloud provider changes them);
// waiting for a first approval alone could finish between the two and leave the second request
// pending. A node with no request at all that is older than the CSR cleaner's hour has long had
// its certificate.
func servingSettled(n *corev1.Node, requests []*certv1.CertificateSigningRequest, now time.Time) string {
	if len(requests) == 0 {
		if now.Sub(n.CreationTimestamp.Time) > csrGarbageAge {
			return ""
		}
		return "no serving certificate request yet"
	}
	var unsigned, stale []string
	for _, req := range requests {
		switch {
		case csr.Pending(req):
			unsigned = append(unsigned, req.Name+" pending")
		case !isApproved(req):
			unsigned = append(unsigned, req.Name+" denied")
		case !csr.Issued(req):
			unsigned = append(unsigned, req.Name+" approved, not yet signed")
		default:
			ok, err := csr.SatisfiesAddresses(req, n.Status.Addresses)
			if err != nil {
				return "request " + req.Name + ": " + err.Error()
			}
			if ok {
				return ""
			}
			stale = append(stale, req.Name)
		}
	}
	sort.Strings(unsigned)
	sort.Strings(stale)
	why := "no signed request for its current addresses"
	if len(unsigned) > 0 {
		why += " (" + strings.Join(unsigned, ", ") + ")"
	}
	if len(stale) > 0 {
		why += "; signed for older addresses: " + strings.Join(stale, ", ")
	}
	return why
}

func isApproved(r *certv1.CertificateSigningRequest) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == certv1.CertificateApproved {
			return true
		}
	}
	return false
}
