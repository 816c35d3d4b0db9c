package phases

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/csr/csrtest"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// csrRun is the part of a run that approving certificate requests reads.
type csrRun struct {
	kc    *kube.Client
	nodes []*inventory.Node

	mu    sync.Mutex
	lines []string
}

func (r *csrRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *csrRun) Nodes() []*inventory.Node                   { return r.nodes }
func (r *csrRun) Logf(host, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, "["+host+"] "+fmt.Sprintf(format, args...))
}

// TestApproveCSRsWaitsForCurrentAddresses checks, against a real apiserver, the case that made
// apply flaky: a kubelet asks for its serving certificate before its Node has its IP, and again
// once it has. approve-csrs must approve both and end only when a signed request matches the
// Node's addresses as they are, not after the first approval. The test plays the kubelet
// (authenticated as system:node:<name>) and kube-controller-manager's signer.
func TestApproveCSRsWaitsForCurrentAddresses(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	saved := kube.Poll
	kube.Poll = 50 * time.Millisecond
	t.Cleanup(func() { kube.Poll = saved })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const node, ip = "csr-cp-1", "10.0.0.5"
	user := "system:node:" + node
	_, err = kc.Kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-test-" + node},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.User(user, "system:nodes")
	if err != nil {
		t.Fatal(err)
	}
	kubelet := kubernetes.NewForConfigOrDie(cfg)

	// The Node registers with its host name only; its IP comes a little later.
	n, err := kc.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setAddresses := func(addrs ...corev1.NodeAddress) {
		t.Helper()
		n.Status.Addresses = addrs
		if n, err = kc.Kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hostname := corev1.NodeAddress{Type: corev1.NodeHostName, Address: node}
	setAddresses(hostname)
	first := requestServing(ctx, t, kubelet, node, nil)

	r := &csrRun{kc: kc, nodes: []*inventory.Node{{Name: node, Host: v1beta1.Host{PrivateAddress: ip}}}}
	done := make(chan error, 1)
	go func() { done <- approveCSRs(ctx, r) }()
	notYet := func(why string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("approve-csrs ended (%v) although %s", err, why)
		case <-time.After(20 * kube.Poll):
		}
	}

	waitApproved(ctx, t, kc, first)
	notYet("the first request is approved but not signed")
	setAddresses(hostname, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	sign(ctx, t, kc, first)
	notYet("the only signed request lacks the IP the Node now has")

	second := requestServing(ctx, t, kubelet, node, []string{ip})
	waitApproved(ctx, t, kc, second)
	notYet("the request for the current addresses is approved but not signed")
	sign(ctx, t, kc, second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("approve-csrs: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("approve-csrs did not end once the request for the Node's addresses was signed")
	}
	r.mu.Lock()
	log := strings.Join(r.lines, "\n")
	r.mu.Unlock()
	for _, name := range []string{first, second} {
		if !strings.Contains(log, "approved kubelet serving certificate request "+name) {
			t.Errorf("the log does not say %s was approved:\n%s", name, log)
		}
	}
}

// TestServingSettled covers what the apiserver test does not: requests the CSR cleaner has
// removed, denied requests, and the reasons given while waiting.
func TestServingSettled(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	node := func(age time.Duration) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "w1", CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "w1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}},
		}
	}
	req := func(name string, ips []string, state string) *certv1.CertificateSigningRequest {
		c := servingRequest(t, "w1", ips)
		c.Name = name
		switch state {
		case "denied":
			c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateDenied, Status: corev1.ConditionTrue}}
		case "approved", "signed":
			c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved, Status: corev1.ConditionTrue}}
		}
		if state == "signed" {
			c.Status.Certificate = []byte("signed")
		}
		return c
	}
	ip := []string{"10.0.0.5"}
	tests := []struct {
		name     string
		node     *corev1.Node
		requests []*certv1.CertificateSigningRequest
		want     string
	}{
		{"a new node that has not asked yet", node(time.Minute), nil, "no serving certificate request yet"},
		{"a node older than the cleaner's hour", node(2 * time.Hour), nil, ""},
		{"signed for its addresses", node(time.Minute), []*certv1.CertificateSigningRequest{req("a", ip, "signed")}, ""},
		{"signed for older addresses, the new one pending", node(time.Minute),
			[]*certv1.CertificateSigningRequest{req("a", nil, "signed"), req("b", ip, "pending")},
			"no signed request for its current addresses (b pending); signed for older addresses: a"},
		{"denied", node(time.Minute), []*certv1.CertificateSigningRequest{req("a", ip, "denied")},
			"no signed request for its current addresses (a denied)"},
		{"approved, unsigned", node(time.Minute), []*certv1.CertificateSigningRequest{req("a", ip, "approved")},
			"no signed request for its current addresses (a approved, not yet signed)"},
		{"an old node's stray pending request beside a signed one", node(2 * time.Hour),
			[]*certv1.CertificateSigningRequest{req("b", []string{"10.9.9.9"}, "pending"), req("a", ip, "signed")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := servingSettled(tt.node, tt.requests, now); got != tt.want {
				t.Errorf("servingSettled = %q, want %q", got, tt.want)
			}
		})
	}
}

// servingRequest is a kubelet serving certificate request for node with its host name and ips.
func servingRequest(t *testing.T, node string, ips []string) *certv1.CertificateSigningRequest {
	return csrtest.Serving(t, "system:node:"+node, []string{node}, ips)
}

// requestServing creates a serving certificate request as the node's kubelet and returns its name.
func requestServing(ctx context.Context, t *testing.T, kubelet kubernetes.Interface, node string, ips []string) string {
	t.Helper()
	c := servingRequest(t, node, ips)
	c.GenerateName = "csr-"
	c.Spec.Username = "" // the apiserver sets it from the requesting user
	created, err := kubelet.CertificatesV1().CertificateSigningRequests().Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created.Name
}

func waitApproved(ctx context.Context, t *testing.T, kc *kube.Client, name string) {
	t.Helper()
	err := kube.Wait(ctx, name+" approved", time.Minute, func(ctx context.Context) (bool, string, error) {
		c, err := kc.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return isApproved(c), "not approved", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sign does what kube-controller-manager's kubelet-serving signer does: it puts a certificate
// in the approved request's status (self-signed here: only its presence matters).
func sign(ctx context.Context, t *testing.T, kc *kube.Client, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kc.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := kc.Kube.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
