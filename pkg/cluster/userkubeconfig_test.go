package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// signing is how the test signer answers approved requests.
type signing int

const (
	sign         signing = iota // as kube-controller-manager does
	deny                        // marks them failed
	signOtherKey                // signs the request's subject over another key
)

// signer plays kube-controller-manager's kubernetes.io/kube-apiserver-client signer, which the
// test environment's API server runs without: it signs approved requests with its own CA for
// their expirationSeconds, or denies them, or (a signer that cannot be trusted) signs another
// key than the request's.
func signer(t *testing.T, kc *kube.Client, how signing) (stop func()) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-signer"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour * 24 * 365), KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list, err := kc.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					csr := &list.Items[i]
					approved := false
					for _, c := range csr.Status.Conditions {
						approved = approved || c.Type == certificatesv1.CertificateApproved
					}
					if !approved || len(csr.Status.Certificate) > 0 || len(csr.Status.Conditions) > 1 {
						continue
					}
					if how == deny {
						csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
							Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure", Message: "test signer refuses"})
					} else {
						block, _ := pem.Decode(csr.Spec.Request)
						req, err := x509.ParseCertificateRequest(block.Bytes)
						if err != nil {
							t.Error(err)
							continue
						}
						tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: req.Subject,
							NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second),
							KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
						pub := req.PublicKey
						if how == signOtherKey {
							other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
							if err != nil {
								t.Error(err)
								continue
							}
							pub = &other.PublicKey
						}
						der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
						if err != nil {
							t.Error(err)
							continue
						}
						csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
					}
					if _, err := kc.Kube.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
						t.Logf("signer: %v", err)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

func TestUserKubeconfig(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	adminPath := filepath.Join(t.TempDir(), "admin.conf")
	if err := envtest.WriteKubeconfig(env.Config, adminPath); err != nil {
		t.Fatal(err)
	}
	admin, err := os.ReadFile(adminPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	stop := signer(t, kc, sign)
	out, notAfter, err := UserKubeconfig(ctx, kc, admin, UserKubeconfigOptions{User: "jane", Groups: []string{"developers", "oncall"}, TTL: 2 * time.Hour})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(notAfter); d < 119*time.Minute || d > 2*time.Hour {
		t.Errorf("the certificate expires in %s, want 2h", d)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	ctxName := cfg.CurrentContext
	user := cfg.AuthInfos[cfg.Contexts[ctxName].AuthInfo]
	cluster := cfg.Clusters[cfg.Contexts[ctxName].Cluster]
	if ctxName != "jane@envtest" || cluster.Server != env.Config.Host || string(cluster.CertificateAuthorityData) != string(env.Config.CAData) {
		t.Errorf("context %q, server %q", ctxName, cluster.Server)
	}
	pair, err := tls.X509KeyPair(user.ClientCertificateData, user.ClientKeyData)
	if err != nil {
		t.Fatalf("the kubeconfig's certificate and key do not match: %v", err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if leaf.Subject.CommonName != "jane" || strings.Join(slices.Sorted(slices.Values(leaf.Subject.Organization)), ",") != "developers,oncall" {
		t.Errorf("certificate for %s %v", leaf.Subject.CommonName, leaf.Subject.Organization)
	}
	left, err := kc.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=slipway"})
	if err != nil || len(left.Items) != 0 {
		t.Errorf("certificate requests left behind: %d (%v)", len(left.Items), err)
	}

	stop = signer(t, kc, deny)
	start := time.Now()
	_, _, err = UserKubeconfig(ctx, kc, admin, UserKubeconfigOptions{User: "joe", TTL: time.Hour, Wait: 30 * time.Second})
	stop()
	if time.Since(start) > 20*time.Second {
		t.Errorf("a refused request took %s to report", time.Since(start))
	}
	if err == nil || !strings.Contains(err.Error(), "refused to sign") || !strings.Contains(err.Error(), "test signer refuses") {
		t.Errorf("a refused request: %v", err)
	}

	stop = signer(t, kc, signOtherKey)
	out, _, err = UserKubeconfig(ctx, kc, admin, UserKubeconfigOptions{User: "joe", TTL: time.Hour, Wait: 30 * time.Second})
	stop()
	if err == nil || !strings.Contains(err.Error(), "the cluster signed a certificate for joe over another public key than the one made here") || out != nil {
		t.Errorf("a certificate over another key: %v, kubeconfig of %d bytes; want it refused", err, len(out))
	}
	left, err = kc.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=slipway"})
	if err != nil || len(left.Items) != 0 {
		t.Errorf("certificate requests left behind: %d (%v)", len(left.Items), err)
	}
}

func TestUserKubeconfigRefuses(t *testing.T) {
	allow := func(o UserKubeconfigOptions) UserKubeconfigOptions { o.AllowSystemIdentity = true; return o }
	for _, tc := range []struct {
		name string
		o    UserKubeconfigOptions
		want string
	}{
		{"system:masters", UserKubeconfigOptions{User: "jane", Groups: []string{"system:masters"}, TTL: time.Hour}, "--group system:masters would make a cluster administrator"},
		{"system:masters, even when allowed", allow(UserKubeconfigOptions{User: "jane", Groups: []string{"system:masters"}, TTL: time.Hour}), "--group system:masters would make a cluster administrator"},
		{"kubeadm's administrators, even when allowed", allow(UserKubeconfigOptions{User: "jane", Groups: []string{"kubeadm:cluster-admins"}, TTL: time.Hour}), "--group kubeadm:cluster-admins would make a cluster administrator"},
		{"the nodes' group", UserKubeconfigOptions{User: "jane", Groups: []string{"system:nodes"}, TTL: time.Hour}, "--group system:nodes: groups starting with system: or kubeadm: are Kubernetes' and kubeadm's own"},
		{"kubeadm's bootstrap token group", UserKubeconfigOptions{User: "jane", Groups: []string{"system:bootstrappers:kubeadm:default-node-token"}, TTL: time.Hour}, "pass --allow-system-identity if you mean it"},
		{"a kubeadm: group", UserKubeconfigOptions{User: "jane", Groups: []string{"developers", "kubeadm:nodes"}, TTL: time.Hour}, "--group kubeadm:nodes: groups starting with"},
		{"a node's name", UserKubeconfigOptions{User: "system:node:cp-1", TTL: time.Hour}, "--user system:node:cp-1: names starting with system: are Kubernetes' own"},
		{"a controller's name", UserKubeconfigOptions{User: "system:kube-controller-manager", TTL: time.Hour}, "pass --allow-system-identity"},
		{"kubeadm's administrator", allow(UserKubeconfigOptions{User: "kubernetes-admin", TTL: time.Hour}), "--user kubernetes-admin is kubeadm's administrator"},
		{"kubeadm's super administrator", UserKubeconfigOptions{User: "kubernetes-super-admin", TTL: time.Hour}, "kubeadm's administrator"},
		{"a space", UserKubeconfigOptions{User: "jane doe", TTL: time.Hour}, `--user "jane doe"`},
		{"a comma", UserKubeconfigOptions{User: "jane", Groups: []string{"a,b"}, TTL: time.Hour}, `--group "a,b"`},
		{"too short", UserKubeconfigOptions{User: "jane", TTL: time.Minute}, "--ttl 1m0s: the cluster signs client certificates for at least 10m"},
		{"longer than the signer signs", UserKubeconfigOptions{User: "jane", TTL: 366 * 24 * time.Hour}, "--ttl 8784h0m0s: the cluster signs client certificates for at most 8760h0m0s (a year, kube-controller-manager's --cluster-signing-duration)"},
		{"past an int32 of seconds", UserKubeconfigOptions{User: "jane", TTL: 70 * 365 * 24 * time.Hour}, "at most 8760h0m0s"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %+v: %v, want an error containing %q", tc.name, tc.o, err, tc.want)
		}
	}
	for _, o := range []UserKubeconfigOptions{
		{User: "jane@example.com", Groups: []string{"developers", "oncall"}, TTL: MinUserTTL},
		{User: "ci", TTL: MaxUserTTL},
		allow(UserKubeconfigOptions{User: "system:node:cp-1", Groups: []string{"system:nodes"}, TTL: time.Hour}),
		allow(UserKubeconfigOptions{User: "jane", Groups: []string{"kubeadm:nodes"}, TTL: time.Hour}),
	} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestCheckIssuedRefusesAnotherKey: a certificate for the user and groups asked for, but over
// another key than the one made here, is refused.
func TestCheckIssuedRefusesAnotherKey(t *testing.T) {
	mine, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	o := UserKubeconfigOptions{User: "jane", Groups: []string{"developers"}, TTL: time.Hour}
	issue := func(pub *ecdsa.PublicKey) []byte {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jane", Organization: []string{"developers"}},
			NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, other)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	if _, err := checkIssued(issue(&mine.PublicKey), o, &mine.PublicKey); err != nil {
		t.Errorf("a certificate over the key made here: %v", err)
	}
	if _, err := checkIssued(issue(&other.PublicKey), o, &mine.PublicKey); err == nil || !strings.Contains(err.Error(), "over another public key than the one made here") {
		t.Errorf("a certificate over another key: %v; want it refused", err)
	}
}
