package sandboxapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
)

// TestFilesLoadInSlipway checks the generated tf.json and slipway.yaml against slipway's own
// loader, so that neither drifts from the manifest API or the Terraform output contract.
func TestFilesLoadInSlipway(t *testing.T) {
	sb := fixture()
	c := load(t, sb)
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

// TestPoolLoadsInSlipway checks slipway.yaml with a worker pool against slipway's own loader:
// the OpenStack cloud provider, external, and one pool on the given network.
func TestPoolLoadsInSlipway(t *testing.T) {
	sb := fixture()
	sb.Pool = &Pool{Network: "sandbox", Replicas: 2}
	c := load(t, sb)
	if c.CloudProvider.OpenStack == nil || !c.CloudProvider.External {
		t.Errorf("cloudProvider = %+v, want openstack, external", c.CloudProvider)
	}
	if len(c.Workers) != 1 {
		t.Fatalf("workers = %+v, want one pool", c.Workers)
	}
	w := c.Workers[0]
	if w.Replicas == nil || *w.Replicas != 2 || w.ProviderSpec.CloudProviderSpec.Network != "sandbox" {
		t.Errorf("pool %s loaded with replicas %v on network %q, want 2 on sandbox", w.Name, w.Replicas, w.ProviderSpec.CloudProviderSpec.Network)
	}
	if mc := c.MachineController; mc.Deploy == nil || !*mc.Deploy || mc.ImageArchive != "" {
		t.Errorf("machineController = %+v, want it deployed from the registry (the sandbox serves its default image)", mc)
	}
}

// load writes the sandbox's files into a new state directory and loads them as slipway apply does.
func load(t *testing.T, sb *Sandbox) *v1beta1.Cluster {
	t.Helper()
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
	return res.Cluster
}
