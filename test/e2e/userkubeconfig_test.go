package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// scopedUser is the client of a user kubeconfig that checkUserKubeconfig made, and when its
// certificate expires.
type scopedUser struct {
	client   kubernetes.Interface
	notAfter time.Time
}

// checkUserKubeconfig makes a kubeconfig for a user of group e2e-viewers with the cluster's real
// signer, valid for the shortest TTL slipway allows (10 minutes), and checks that RBAC alone
// decides what it may do. checkUserExpired checks the same user again once the TTL has passed.
func (h *harness) checkUserKubeconfig(t *testing.T, manifest string) scopedUser {
	r := h.slipway(nil, "kubeconfig", "-m", manifest, "--user", "e2e-viewer", "--group", "e2e-viewers", "--ttl", "10m", "--file", "-")
	if r.code != 0 {
		t.Fatalf("kubeconfig --user: exit code %d\n%s", r.code, r.out)
	}
	cfg, err := clientcmd.Load([]byte(r.stdout))
	if err != nil {
		t.Fatalf("kubeconfig --user printed no kubeconfig: %v", err)
	}
	user := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	block, _ := pem.Decode(user.ClientCertificateData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(cert.NotAfter); cert.Subject.CommonName != "e2e-viewer" || left > 11*time.Minute || left < 8*time.Minute {
		t.Errorf("certificate for %s expiring in %s; want e2e-viewer, 10m", cert.Subject.CommonName, left)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := viewer.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the new user lists pods before any RoleBinding: %v; want forbidden", err)
	}
	admin := h.kube("e2e")
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-viewers", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: "e2e-viewers"}}}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer admin.RbacV1().RoleBindings("default").Delete(ctx, rb.Name, metav1.DeleteOptions{})
	err = kube.Wait(ctx, "the group's RoleBinding to take effect", time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := viewer.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Error(err)
	}
	if _, err := viewer.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the viewer lists Secrets in kube-system: %v; want forbidden", err)
	}
	if !strings.Contains(r.out, "valid until") {
		t.Errorf("kubeconfig --user does not say until when the certificate is valid:\n%s", redactKeys(r.out))
	}
	return scopedUser{client: viewer, notAfter: cert.NotAfter}
}

// checkUserExpired checks that the API authenticates u until its certificate's NotAfter (it is
// refused as forbidden, its RoleBinding being gone) and refuses it as unauthorized from then on.
// It waits for the expiry when the TTL has not passed yet.
func (h *harness) checkUserExpired(t *testing.T, u scopedUser) {
	if u.client == nil {
		t.Fatal("no user kubeconfig was made earlier in the test")
	}
	ctx := context.Background()
	err := kube.Wait(ctx, "the API to refuse the user once its certificate expired at "+u.notAfter.Format(time.RFC3339),
		time.Until(u.notAfter)+2*time.Minute, func(ctx context.Context) (bool, string, error) {
			_, err := u.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			expired := time.Now().After(u.notAfter)
			switch {
			case apierrors.IsUnauthorized(err) && expired:
				return true, "", nil
			case apierrors.IsUnauthorized(err):
				return true, "", fmt.Errorf("the API refused the user as unauthorized %s before its certificate expired: %v", time.Until(u.notAfter).Round(time.Second), err)
			case err == nil:
				return true, "", fmt.Errorf("the user lists pods with no RoleBinding (expired: %t)", expired)
			case apierrors.IsForbidden(err):
				return false, fmt.Sprintf("authenticated, forbidden (expired: %t)", expired), nil
			}
			return false, err.Error(), nil
		})
	if err != nil {
		t.Error(err)
	}
}
