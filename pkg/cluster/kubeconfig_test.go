package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

func TestWriteKubeconfigMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c-kubeconfig")
	changed, err := WriteKubeconfig(p, []byte("a"))
	if err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if changed, err := WriteKubeconfig(p, []byte("a")); err != nil || changed {
		t.Fatalf("same content must not count as a change: %v %v", changed, err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteKubeconfig(p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a loosened mode must be tightened again, got %v", fi.Mode().Perm())
	}
}

// TestFetchKubeconfigIsRebuilt: what kubeconfig prints and apply saves is rebuilt from the
// host's admin.conf (its server, CA and credentials), so a context the host added, with a file
// path in it, never reaches the operator's kubectl; a foreign server is refused with the host.
func TestFetchKubeconfigIsRebuilt(t *testing.T) {
	ca, _, err := certutil.GenerateSelfSignedCertKey("kubernetes", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := certutil.GenerateSelfSignedCertKey("kubernetes-admin", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin := clientcmdapi.NewConfig()
	admin.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://10.0.0.10:6443", CertificateAuthorityData: ca}
	admin.AuthInfos["kubernetes-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	admin.Contexts["kubernetes-admin@c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "kubernetes-admin"}
	admin.Clusters["planted"] = &clientcmdapi.Cluster{Server: "https://attacker.example", CertificateAuthority: "/home/user/.ssh/id_rsa"}
	admin.Contexts["planted"] = &clientcmdapi.Context{Cluster: "planted", AuthInfo: "kubernetes-admin"}
	admin.CurrentContext = "kubernetes-admin@c"
	m := &v1beta1.Cluster{Name: "c", APIEndpoint: v1beta1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
		ControlPlane: v1beta1.ControlPlane{Hosts: []v1beta1.Host{{PublicAddress: "10.0.0.1", PrivateAddress: "192.168.0.1", IsLeader: true}}}}
	fleet := &sshtest.Fleet{}
	set := func() {
		data, err := clientcmd.Write(*admin)
		if err != nil {
			t.Fatal(err)
		}
		fleet.Get("10.0.0.1").SetFile(access.AdminConf, sshtest.File{Data: data})
	}
	set()
	data, err := FetchKubeconfig(context.Background(), NewTarget(m, fleet))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "planted") || strings.Contains(string(data), "id_rsa") || !strings.Contains(string(data), "server: https://10.0.0.10:6443") {
		t.Errorf("the kubeconfig is not the host's server, CA and credentials alone:\n%s", data)
	}
	admin.Clusters["c"].Server = "https://attacker.example:6443"
	set()
	if _, err := FetchKubeconfig(context.Background(), NewTarget(m, fleet)); err == nil ||
		!strings.Contains(err.Error(), `10.0.0.1: refusing /etc/kubernetes/admin.conf: cluster "c": server "https://attacker.example:6443" is not the cluster's API`) {
		t.Errorf("a foreign server: %v", err)
	}
}
