package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// UserKubeconfigOptions say whom a user kubeconfig is for.
type UserKubeconfigOptions struct {
	// User is the certificate's common name, which Kubernetes takes as the user name.
	User string
	// Groups are the certificate's organizations, which Kubernetes takes as the user's groups.
	Groups []string
	// TTL is how long the certificate is valid: from MinUserTTL (the signer's minimum) to
	// MaxUserTTL (kube-controller-manager's --cluster-signing-duration, which slipway leaves at
	// its default).
	TTL time.Duration
	// AllowSystemIdentity lets the user name start with system: and the groups start with
	// system: or kubeadm:, the names Kubernetes and kubeadm give nodes, bootstrap tokens and
	// control-plane components. system:masters and kubeadm:cluster-admins stay refused.
	AllowSystemIdentity bool
	// Wait bounds how long the signer may take (default a minute).
	Wait time.Duration
}

// The TTLs the cluster's kubernetes.io/kube-apiserver-client signer issues certificates for:
// the API's minimum for expirationSeconds, and kube-controller-manager's default
// --cluster-signing-duration, which caps every certificate it signs.
const (
	MinUserTTL = 10 * time.Minute
	MaxUserTTL = 365 * 24 * time.Hour
)

var userRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9@._:-]{0,127}$`)

// Validate checks the user, groups and TTL before anything is asked of the cluster. Identities
// that Kubernetes and kubeadm give meaning to are refused: groups that RBAC cannot restrict
// (system:masters) or that kubeadm binds to cluster-admin (kubeadm:cluster-admins) always, and
// without AllowSystemIdentity every system: user name (a node, a controller) and every system:
// or kubeadm: group (system:nodes, system:bootstrappers:*), which carry the rights of nodes and
// bootstrap tokens.
func (o UserKubeconfigOptions) Validate() error {
	if !userRe.MatchString(o.User) {
		return fmt.Errorf("--user %q: want a name of letters, digits and @._:-, at most 128", o.User)
	}
	if o.User == "kubernetes-admin" || o.User == "kubernetes-super-admin" {
		return fmt.Errorf("--user %s is kubeadm's administrator; use the admin kubeconfig (slipway kubeconfig) for that", o.User)
	}
	if strings.HasPrefix(o.User, "system:") && !o.AllowSystemIdentity {
		return fmt.Errorf("--user %s: names starting with system: are Kubernetes' own (nodes, controllers) and carry their rights; pass --allow-system-identity if you mean it", o.User)
	}
	for _, g := range o.Groups {
		if !userRe.MatchString(g) {
			return fmt.Errorf("--group %q: want letters, digits and @._:-, at most 128", g)
		}
		if g == "system:masters" || g == "kubeadm:cluster-admins" {
			return fmt.Errorf("--group %s would make a cluster administrator; use the admin kubeconfig (slipway kubeconfig) for that", g)
		}
		if (strings.HasPrefix(g, "system:") || strings.HasPrefix(g, "kubeadm:")) && !o.AllowSystemIdentity {
			return fmt.Errorf("--group %s: groups starting with system: or kubeadm: are Kubernetes' and kubeadm's own (nodes, bootstrap tokens) and carry their rights; pass --allow-system-identity if you mean it", g)
		}
	}
	if o.TTL < MinUserTTL {
		return fmt.Errorf("--ttl %s: the cluster signs client certificates for at least %s", o.TTL, MinUserTTL)
	}
	if o.TTL > MaxUserTTL {
		return fmt.Errorf("--ttl %s: the cluster signs client certificates for at most %s (a year, kube-controller-manager's --cluster-signing-duration)", o.TTL, MaxUserTTL)
	}
	return nil
}

// UserKubeconfig makes a kubeconfig for a user whose rights come from RBAC alone: a new key made
// here, and a client certificate for it that the cluster's own signer
// (kubernetes.io/kube-apiserver-client) issues for the TTL through a CertificateSigningRequest,
// approved with the admin credentials. The cluster CA's key never leaves the control planes,
// and the request is deleted once the certificate is read. adminKubeconfig gives the API's
// address and CA for the new kubeconfig. It returns the kubeconfig and when its certificate expires.
func UserKubeconfig(ctx context.Context, c *kube.Client, adminKubeconfig []byte, o UserKubeconfigOptions) ([]byte, time.Time, error) {
	var none time.Time
	if err := o.Validate(); err != nil {
		return nil, none, err
	}
	if o.Wait == 0 {
		o.Wait = time.Minute
	}
	admin, err := clientcmd.Load(adminKubeconfig)
	if err != nil {
		return nil, none, fmt.Errorf("reading the admin kubeconfig: %w", err)
	}
	cur := admin.Contexts[admin.CurrentContext]
	if cur == nil || admin.Clusters[cur.Cluster] == nil {
		return nil, none, fmt.Errorf("the admin kubeconfig has no current context with a cluster")
	}
	cluster := admin.Clusters[cur.Cluster]

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, none, err
	}
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: o.User, Organization: slices.Clone(o.Groups)}}, key)
	if err != nil {
		return nil, none, err
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return nil, none, err
	}
	seconds := int32(o.TTL / time.Second) // Validate bounds it by a year, well inside an int32
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "slipway-user-" + hex.EncodeToString(suffix),
			Labels: map[string]string{"app.kubernetes.io/managed-by": "slipway"}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER}),
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			ExpirationSeconds: &seconds,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	csrs := c.Kube.CertificatesV1().CertificateSigningRequests()
	created, err := csrs.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, none, fmt.Errorf("requesting a certificate for %s: %w", o.User, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = csrs.Delete(dctx, created.Name, metav1.DeleteOptions{})
	}()
	created.Status.Conditions = append(created.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "SlipwayKubeconfig",
		Message: fmt.Sprintf("slipway kubeconfig --user %s, valid %s", o.User, o.TTL)})
	if _, err := csrs.UpdateApproval(ctx, created.Name, created, metav1.UpdateOptions{}); err != nil {
		return nil, none, fmt.Errorf("approving the certificate request %s: %w", created.Name, err)
	}
	var certPEM []byte
	err = kube.Wait(ctx, "the cluster to sign the certificate of "+o.User, o.Wait, func(ctx context.Context) (bool, string, error) {
		got, err := csrs.Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == certificatesv1.CertificateFailed || cond.Type == certificatesv1.CertificateDenied {
				return true, "", fmt.Errorf("the cluster refused to sign %s: %s %s", created.Name, cond.Reason, cond.Message)
			}
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, "not signed yet (kube-controller-manager signs approved requests)", nil
	})
	if err != nil {
		return nil, none, err
	}
	cert, err := checkIssued(certPEM, o, &key.PublicKey)
	if err != nil {
		return nil, none, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, none, err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[cur.Cluster] = &clientcmdapi.Cluster{Server: cluster.Server, CertificateAuthorityData: cluster.CertificateAuthorityData}
	kc.AuthInfos[o.User] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM,
		ClientKeyData: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
	name := o.User + "@" + cur.Cluster
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: cur.Cluster, AuthInfo: o.User}
	kc.CurrentContext = name
	out, err := clientcmd.Write(*kc)
	return out, cert.NotAfter, err
}

// checkIssued checks that the signed certificate is the one asked for: the user and groups,
// and the key made here (a certificate for another key would leave the kubeconfig with a key
// that does not match it, or bind someone else's key to the user).
func checkIssued(certPEM []byte, o UserKubeconfigOptions, pub *ecdsa.PublicKey) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, fmt.Errorf("the cluster returned no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the cluster returned a certificate that does not parse: %w", err)
	}
	// DER sorts the organizations (a SET OF): compare them as a set.
	groups, want := slices.Sorted(slices.Values(cert.Subject.Organization)), slices.Sorted(slices.Values(o.Groups))
	if cert.Subject.CommonName != o.User || len(groups) != len(want) || (len(groups) > 0 && !slices.Equal(groups, want)) {
		return nil, fmt.Errorf("the cluster signed %q (groups %q), not %s (groups %v)", cert.Subject.CommonName, groups, o.User, o.Groups)
	}
	if !pub.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("the cluster signed a certificate for %s over another public key than the one made here", o.User)
	}
	return cert, nil
}
