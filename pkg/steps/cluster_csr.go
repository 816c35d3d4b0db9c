package steps

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
	"github.com/slipway-dev/slipway/pkg/kube"
)

// ApproveCSRs approves the kubelet serving certificate requests of the manifest's hosts whose
// names and addresses are the host's own, and waits until every host that has joined has one
// approved. Requests for names slipway does not manage are left alone.
func (e *Env) ApproveCSRs(ctx context.Context, _ string) error {
	c, err := e.Kube(ctx)
	if err != nil {
		return err
	}
	addrs := map[string][]corev1.NodeAddress{}
	for _, n := range e.Nodes {
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
		nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		list, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		approved := map[string]bool{}
		for i := range list.Items {
			r := &list.Items[i]
			name, ok := csr.NodeName(r)
			if !ok || addrs[name] == nil {
				continue
			}
			if !csr.Pending(r) {
				approved[name] = approved[name] || isApproved(r)
				continue
			}
			if err := csr.CheckServing(r, name, addrs[name]); err != nil {
				e.logf(name, "not approving %s: %v", r.Name, err)
				continue
			}
			r.Status.Conditions = append(r.Status.Conditions, certv1.CertificateSigningRequestCondition{
				Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "SlipwayHostMatch",
				Message: "names and addresses belong to host " + name + " of the cluster manifest", LastUpdateTime: metav1.Now(),
			})
			if _, err := c.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, r.Name, r, metav1.UpdateOptions{}); err != nil {
				return false, "", fmt.Errorf("approving %s: %w", r.Name, err)
			}
			e.logf(name, "approved kubelet serving certificate request %s", r.Name)
			approved[name] = true
		}
		var missing []string
		for _, n := range nodes.Items {
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

// PendingCSRs reports whether any kubelet serving request of the manifest's hosts waits.
func PendingCSRs(ctx context.Context, c *kube.Client, names map[string]bool) (bool, error) {
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
