package sandboxapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/config"
)

// TestFilesLoadInSlipway checks the generated tf.json and slipway.yaml against slipway's own
// loader, so that neither drifts from the manifest API or the Terraform output contract.
func TestFilesLoadInSlipway(t *testing.T) {
	sb := fixture()
	sb.Dir = t.TempDir()
	if err := os.WriteFile(sb.Path(KeyFile), []byte("not read by config loading"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sb.writeFiles(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := config.Load(context.Background(), config.Options{
		ManifestPath: sb.Path(ManifestFile), TerraformSource: sb.Path(TFOutputFile),
	})
	if err != nil {
		t.Fatalf("slipway cannot load the sandbox's files: %v", err)
	}
	c := res.Cluster
	if got := len(c.ControlPlane.Hosts); got != 3 {
		t.Errorf("control-plane hosts = %d, want 3", got)
	}
	if got := len(c.StaticWorkers.Hosts); got != 1 {
		t.Errorf("static workers = %d, want 1", got)
	}
	for _, h := range append(c.ControlPlane.Hosts, c.StaticWorkers.Hosts...) {
		want, _ := sb.Host(h.Hostname)
		if h.PublicAddress != want.IP || h.SSHHostPublicKey != want.HostKey || h.SSHPrivateKeyFile != filepath.Join(sb.Dir, KeyFile) {
			t.Errorf("host %s loaded as %+v, want address %s and host key %q", h.Hostname, h, want.IP, want.HostKey)
		}
	}
	if c.APIEndpoint.Host != "172.30.0.10" || c.APIEndpoint.Port != 6443 {
		t.Errorf("API endpoint = %+v, want the load balancer 172.30.0.10:6443", c.APIEndpoint)
	}
	if c.Assets.Packages == nil || c.Assets.Packages.BaseURL != sb.Assets.Files {
		t.Errorf("assets = %+v, want packages from %s", c.Assets, sb.Assets.Files)
	}
	// The control-plane images come from registry.k8s.io, flannel's from ghcr.io.
	for _, registry := range []string{"registry.k8s.io", "ghcr.io"} {
		mirror := c.ContainerRuntime.Containerd.Registries[registry]
		if len(mirror.Mirrors) != 1 || mirror.Mirrors[0] != sb.Assets.Registry {
			t.Errorf("%s mirrors = %v, want [%s]", registry, mirror.Mirrors, sb.Assets.Registry)
		}
	}
	n := c.ClusterNetwork
	if len(n.UpstreamDNS) != 1 || n.UpstreamDNS[0] != sb.Assets.IP {
		t.Errorf("clusterNetwork.upstreamDNS = %v, want [%s], the resolver the hosts' resolv.upstream.conf names", n.UpstreamDNS, sb.Assets.IP)
	}
	if m := n.KubeProxy.ConntrackMaxPerCore; m == nil || *m != 0 {
		t.Errorf("clusterNetwork.kubeProxy.conntrackMaxPerCore = %v, want 0 (nf_conntrack_max is read-only in host containers)", m)
	}
	if n.CNI.Flannel == nil {
		t.Errorf("clusterNetwork.cni = %+v, want flannel", n.CNI)
	}
}
