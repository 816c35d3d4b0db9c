package kubeadm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/test/kubebin"
)

// TestKubeadmValidates runs `kubeadm config validate` (strict: unknown fields are errors) on
// every rendered configuration.
func TestKubeadmValidates(t *testing.T) {
	bin := kubebin.Kubeadm(t, "v1.36.3")
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.render(t)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "kubeadm.yaml")
			if err := os.WriteFile(path, got, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "config", "validate", "--config", path).CombinedOutput()
			if err != nil {
				t.Fatalf("kubeadm config validate: %v\n%s\n--- config:\n%s", err, out, got)
			}
			if !strings.HasPrefix(tc.name, "upgrade") {
				return
			}
			// validate does not look at UpgradeConfiguration. `upgrade plan` loads it strictly
			// (reporting unknown fields as warnings) and validates it before it needs a cluster,
			// and unlike `upgrade apply --dry-run` it writes nothing under /etc/kubernetes.
			out, _ = exec.Command(bin, "upgrade", "plan", "--config", path, "--kubeconfig", filepath.Join(t.TempDir(), "none")).CombinedOutput()
			for _, bad := range []string{"strict decoding error", "unknown field", "invalid configuration"} {
				if strings.Contains(string(out), bad) {
					t.Errorf("kubeadm upgrade plan rejected the UpgradeConfiguration (%q):\n%s", bad, out)
				}
			}
			if !strings.Contains(string(out), "couldn't create a Kubernetes client") {
				t.Errorf("kubeadm upgrade plan did not get past loading the configuration:\n%s", out)
			}
		})
	}
}

// TestKubeadmAppliesKubeletPatch lets kubeadm write a host's kubelet configuration in dry-run
// mode and checks that the host's patch reached it.
func TestKubeadmAppliesKubeletPatch(t *testing.T) {
	bin := kubebin.Kubeadm(t, "v1.36.3")
	c := load(t, "ha")
	c.Versions.Kubernetes = "v1.36.3" // kubeadm refuses to render for a newer minor than its own
	host := c.ControlPlane.Hosts[0]
	cfg, err := kubeadm.InitConfig(c, node(host), kubeadm.KubeletParams{}, kubeadm.InitSecrets{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	patch, ok, err := kubeadm.KubeletPatch(host)
	if err != nil || !ok {
		t.Fatalf("KubeletPatch = ok %v, err %v", ok, err)
	}
	dir := t.TempDir()
	patches := filepath.Join(dir, "patches")
	if err := os.Mkdir(patches, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(patches, kubeadm.KubeletPatchFile), patch, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.ReplaceAll(string(cfg), kubeadm.PatchesDir, patches))
	if err := os.WriteFile(filepath.Join(dir, "init.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	dryRun := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "init", "phase", "kubelet-start", "--dry-run", "--config", filepath.Join(dir, "init.yaml"))
	cmd.Env = append(os.Environ(), "KUBEADM_INIT_DRYRUN_DIR="+dryRun)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubeadm init phase kubelet-start: %v\n%s", err, out)
	}
	written, err := os.ReadFile(filepath.Join(dryRun, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"maxPods: 200", "cpu: 100m", "memory: 256Mi", "cgroupDriver: systemd", "serverTLSBootstrap: true"} {
		if !strings.Contains(string(written), want) {
			t.Errorf("kubelet config.yaml written by kubeadm lacks %q:\n%s", want, written)
		}
	}
}

// TestKubeadmWritesEncryptionArgs lets kubeadm write the kube-apiserver static pod from the
// configuration that reconfigures a control plane, in dry-run mode, and checks that it runs
// with the encryption configuration, reloaded automatically, mounted read-only.
func TestKubeadmWritesEncryptionArgs(t *testing.T) {
	bin := kubebin.Kubeadm(t, "v1.36.3")
	c := load(t, "ha")
	c.Versions.Kubernetes = "v1.36.3"
	c.Encryption.Enabled = true
	host := c.ControlPlane.Hosts[1]
	cfg, err := kubeadm.ControlPlaneConfig(c, node(host), kubeadm.KubeletParams{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg = []byte(strings.ReplaceAll(string(cfg), kubeadm.PatchesDir, filepath.Join(dir, "patches")))
	if err := os.WriteFile(filepath.Join(dir, "cp.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	dryRun := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "init", "phase", "control-plane", "apiserver", "--dry-run", "--config", filepath.Join(dir, "cp.yaml"))
	cmd.Env = append(os.Environ(), "KUBEADM_INIT_DRYRUN_DIR="+dryRun)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubeadm init phase control-plane apiserver: %v\n%s", err, out)
	}
	written, err := os.ReadFile(filepath.Join(dryRun, "kube-apiserver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- --encryption-provider-config=/etc/kubernetes/encryption/config.yaml",
		"- --encryption-provider-config-automatic-reload=true",
		"- --advertise-address=" + host.PrivateAddress,
		"mountPath: /etc/kubernetes/encryption\n      name: encryption-config\n      readOnly: true",
		"path: /etc/kubernetes/encryption\n      type: DirectoryOrCreate\n    name: encryption-config",
	} {
		if !strings.Contains(string(written), want) {
			t.Errorf("kube-apiserver.yaml written by kubeadm lacks %q:\n%s", want, written)
		}
	}
}
