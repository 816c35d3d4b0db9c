package kubeadm_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/test/golden"
)

const (
	token   = "abcdef.0123456789abcdef"
	certKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

var caHash = "sha256:" + strings.Repeat("ab", 32)

// load reads testdata/clusters/<name>.yaml through the same loader as slipway itself.
func load(t *testing.T, name string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: filepath.Join("testdata", "clusters", name+".yaml")})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return res.Cluster
}

func node(h v1beta1.Host, ignore ...string) kubeadm.NodeParams {
	return kubeadm.NodeParams{Host: h, Name: "probed-" + strings.ReplaceAll(h.PrivateAddress, ":", "-"), IgnorePreflightErrors: ignore}
}

// goldenCase is one rendered file, compared with testdata/<name>.golden.
type goldenCase struct {
	name   string
	render func(t *testing.T) ([]byte, error)
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"init-single", func(t *testing.T) ([]byte, error) {
			c := load(t, "single")
			return kubeadm.InitConfig(c, node(c.ControlPlane.Hosts[0]), kubeadm.KubeletParams{}, kubeadm.InitSecrets{Token: token})
		}},
		{"init-ha-cgroupv1", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			ignore, err := kubeadm.PreflightIgnores(c, true, "HTTPProxyCIDR")
			if err != nil {
				return nil, err
			}
			return kubeadm.InitConfig(c, node(c.ControlPlane.Hosts[0], ignore...),
				kubeadm.KubeletParams{ResolvConf: "/etc/slipway/resolv.conf", CgroupV1: true},
				kubeadm.InitSecrets{Token: token, TokenTTL: 2 * time.Hour, CertificateKey: certKey})
		}},
		{"init-cilium-ipv6", func(t *testing.T) ([]byte, error) {
			c := load(t, "cilium")
			return kubeadm.InitConfig(c, node(c.ControlPlane.Hosts[0]), kubeadm.KubeletParams{CgroupV1: true}, kubeadm.InitSecrets{Token: token})
		}},
		{"upload-certs-ha", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			return kubeadm.UploadCertsConfig(c, node(c.ControlPlane.Hosts[0]), kubeadm.KubeletParams{CgroupV1: true}, certKey)
		}},
		{"join-worker", func(t *testing.T) ([]byte, error) {
			c := load(t, "single")
			return kubeadm.JoinConfig(c, node(c.StaticWorkers.Hosts[0]), kubeadm.JoinParams{Token: token, CACertHashes: []string{caHash}})
		}},
		{"join-worker-patched", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			return kubeadm.JoinConfig(c, node(c.StaticWorkers.Hosts[0]), kubeadm.JoinParams{Token: token, CACertHashes: []string{caHash}})
		}},
		{"join-control-plane", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			return kubeadm.JoinConfig(c, node(c.ControlPlane.Hosts[2], "SystemVerification"),
				kubeadm.JoinParams{Token: token, CACertHashes: []string{caHash}, ControlPlane: true, CertificateKey: certKey})
		}},
		{"control-plane-ha-encryption", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			c.Encryption.Enabled = true
			return kubeadm.ControlPlaneConfig(c, node(c.ControlPlane.Hosts[1]), kubeadm.KubeletParams{CgroupV1: true})
		}},
		{"upgrade-ha", func(t *testing.T) ([]byte, error) {
			c := load(t, "ha")
			return kubeadm.UpgradeConfig(c, node(c.ControlPlane.Hosts[0], "SystemVerification"))
		}},
		{"upgrade-single", func(t *testing.T) ([]byte, error) {
			c := load(t, "single")
			return kubeadm.UpgradeConfig(c, node(c.StaticWorkers.Hosts[0]))
		}},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.render(t)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), got)
		})
	}
}

// TestEncryptionArgs: the API server gets the encryption configuration, reloaded when it
// changes, from its directory mounted read-only, only when the manifest enables encryption;
// and the configuration for reconfiguring a control plane carries no secret.
func TestEncryptionArgs(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		c := load(t, "ha")
		c.Encryption.Enabled = enabled
		cfg, err := kubeadm.ControlPlaneConfig(c, node(c.ControlPlane.Hosts[0]), kubeadm.KubeletParams{})
		if err != nil {
			t.Fatal(err)
		}
		text := string(cfg)
		for _, want := range []string{
			"- name: encryption-provider-config\n      value: /etc/kubernetes/encryption/config.yaml\n",
			"- name: encryption-provider-config-automatic-reload\n      value: \"true\"\n",
			"- name: encryption-config\n      hostPath: /etc/kubernetes/encryption\n      mountPath: /etc/kubernetes/encryption\n      readOnly: true\n",
		} {
			if strings.Contains(text, want) != enabled {
				t.Errorf("encryption.enabled %v: the configuration has %q: %v\n%s", enabled, want, !enabled, text)
			}
		}
		for _, secret := range []string{"token:", "certificateKey:", "bootstrapTokens"} {
			if strings.Contains(text, secret) {
				t.Errorf("ControlPlaneConfig carries %s:\n%s", secret, text)
			}
		}
	}
}

func TestKubeletFiles(t *testing.T) {
	c := load(t, "ha")
	cfg, err := kubeadm.KubeletConfig(c, kubeadm.KubeletParams{ResolvConf: "/etc/slipway/resolv.conf", CgroupV1: true})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "kubelet-config.golden"), cfg)
	patch, ok, err := kubeadm.KubeletPatch(c.StaticWorkers.Hosts[0])
	if err != nil || !ok {
		t.Fatalf("KubeletPatch(worker-1) = ok %v, err %v; want a patch", ok, err)
	}
	golden.Check(t, filepath.Join("testdata", "kubelet-patch-worker.golden"), patch)
	if _, ok, _ := kubeadm.KubeletPatch(c.ControlPlane.Hosts[1]); ok {
		t.Error("KubeletPatch(cp-2) returned a patch for a host without kubelet settings")
	}
}
