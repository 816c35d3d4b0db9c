package scenarios

import (
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/csr/csrtest"
	"github.com/slipway-dev/slipway/test/envtest"
)

// CSRApproval has a joined Machine's kubelet (authenticated as system:node:<name>) request two
// serving certificates: one for its own name and address, which is approved, and one that adds
// an address the Machine does not have, which stays pending.
func CSRApproval(t *testing.T, env *envtest.Env, newCloud NewCloud) {
	f := setup(t, env, newCloud, nil)
	f.create(f.deployment("csr", 1, intstr.FromInt32(1), intstr.FromInt32(0)))
	m := f.waitRunning(1)[0]
	nodeName := m.Status.NodeRef.Name
	user := "system:node:" + nodeName
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-" + f.ns},
		// What a kubelet may do with CSRs: create them and read them back.
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}},
	}
	f.create(binding)
	cfg, err := env.User(user, "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	kubelet := kubernetes.NewForConfigOrDie(cfg)

	var ip string
	for _, a := range m.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	good := f.requestServingCert(kubelet, nodeName, []string{nodeName}, []string{ip})
	bad := f.requestServingCert(kubelet, nodeName, []string{nodeName}, []string{ip, "203.0.113.9"})
	envtest.Eventually(t, wait, "the matching CSR approved", func() (bool, string) {
		return approved(env, t, good), "pending"
	})
	f.consistently(1500*time.Millisecond, "the CSR with a foreign address pending", func() (bool, string) {
		return !approved(env, t, bad), "approved a certificate for 203.0.113.9"
	})
	f.expectEvent(&m, "CSRNotApproved")
}

func approved(env *envtest.Env, t *testing.T, name string) bool {
	c := &certv1.CertificateSigningRequest{}
	c.Name = name
	env.Get(t, c)
	for _, cond := range c.Status.Conditions {
		if cond.Type == certv1.CertificateApproved && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// requestServingCert creates a kubelet serving CSR as the kubelet would.
func (f *fixture) requestServingCert(c kubernetes.Interface, nodeName string, dns, ips []string) string {
	f.t.Helper()
	csr := csrtest.Serving(f.t, "system:node:"+nodeName, dns, ips)
	csr.GenerateName = "csr-" + f.ns + "-"
	csr.Spec.Username = ""
	out, err := c.CertificatesV1().CertificateSigningRequests().Create(f.ctx, csr, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("creating CSR as %s: %v", nodeName, err)
	}
	if out.Spec.Username != "system:node:"+nodeName {
		f.t.Fatalf("CSR username = %q", out.Spec.Username)
	}
	return out.Name
}
