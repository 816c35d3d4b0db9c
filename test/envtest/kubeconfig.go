package envtest

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WriteKubeconfig writes a kubeconfig for cfg (one of the environment's configs), for a component
// that runs as a process of its own. The file holds a client key, so it is written 0600.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "user"}
	kc.CurrentContext = "envtest"
	// clientcmd.WriteToFile writes 0600.
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// UserConfig returns a client configuration that authenticates to the environment as user name
// in groups (a client certificate, as the API server's own users have), so that a component run
// as a process in a test is held to the RBAC a manifest grants that user, a ServiceAccount's
// ("system:serviceaccount:<namespace>:<name>") included.
func (e *Env) UserConfig(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(crenvtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return u.Config(), nil
}

// Kubectl is the path of the kubectl built beside the environment's kube-apiserver (make ci-kube).
func (e *Env) Kubectl() string { return filepath.Join(e.env.BinaryAssetsDirectory, "kubectl") }
