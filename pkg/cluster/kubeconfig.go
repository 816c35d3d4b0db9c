package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/access"
)

// KubeconfigPath is where apply saves the admin kubeconfig: <cluster>-kubeconfig in the
// working directory, as KubeOne users expect.
func KubeconfigPath(clusterName string) string { return clusterName + "-kubeconfig" }

// FetchKubeconfig downloads the admin kubeconfig from the first control plane that has one.
func FetchKubeconfig(ctx context.Context, t *Target) ([]byte, error) {
	return fetchKubeconfig(ctx, t.access())
}

// FetchUserKubeconfig makes a kubeconfig for a user with a short-lived certificate the cluster
// signs (see UserKubeconfig), through the first control plane that answers.
func FetchUserKubeconfig(ctx context.Context, t *Target, o UserKubeconfigOptions) ([]byte, time.Time, error) {
	if err := o.Validate(); err != nil {
		return nil, time.Time{}, err
	}
	api := t.access()
	admin, err := fetchKubeconfig(ctx, api)
	if err != nil {
		return nil, time.Time{}, err
	}
	c, err := api.Kube(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	return UserKubeconfig(ctx, c, admin, o)
}

func fetchKubeconfig(ctx context.Context, api *access.Cluster) ([]byte, error) {
	// What is saved and printed is rebuilt from the host's file: its server, CA and credentials
	// alone (access.Vet).
	data, _, err := api.AdminKubeconfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the admin kubeconfig (has apply run?): %w", err)
	}
	return data, nil
}

// WriteKubeconfig writes data to path with mode 0600, atomically, and reports whether the file
// changed. The file holds cluster-admin credentials: it is never readable by others, not even
// for a moment.
func WriteKubeconfig(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, os.Chmod(path, 0o600)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".kubeconfig-*")
	if err != nil {
		return false, fmt.Errorf("writing kubeconfig: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return false, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return false, fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return true, nil
}

// ValidateProxyURL checks a kubeconfig proxy-url: empty, or an absolute http, https or socks5
// URL with a host, which is what client-go accepts.
func ValidateProxyURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("--proxy-url %q: %w", s, err)
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return fmt.Errorf("--proxy-url %q: the scheme must be http, https or socks5, such as http://127.0.0.1:8080", s)
	}
	if u.Host == "" {
		return fmt.Errorf("--proxy-url %q: no host, such as http://127.0.0.1:8080", s)
	}
	return nil
}

// SetProxyURL sets proxy-url on every cluster of the kubeconfig data; an empty proxy leaves it
// as it is.
func SetProxyURL(data []byte, proxy string) ([]byte, error) {
	if proxy == "" {
		return data, nil
	}
	if err := ValidateProxyURL(proxy); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("setting the proxy URL: the kubeconfig does not load: %w", err)
	}
	for _, c := range cfg.Clusters {
		c.ProxyURL = proxy
	}
	return clientcmd.Write(*cfg)
}
