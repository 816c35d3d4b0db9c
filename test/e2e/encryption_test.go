package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/pkg/plan"
)

// checkEncryption is issue 20's test 6 on a running cluster whose manifest now enables
// encryption at rest: the plan stages the key, restarts each API server and rewrites the
// Secrets; afterwards every control plane holds the same root-only file, and a Secret written
// then is in etcd (read from an etcd snapshot, which holds the raw values) under key-1 and never
// in plain text. A key rotation follows: both Secrets read back, one written after it is under
// key-2, and no key appeared in slipway's output. Each apply leaves nothing to do.
func (h *harness) checkEncryption(t *testing.T, c kubernetes.Interface, manifest string, controlPlanes []string) {
	p := h.plan(manifest)
	want := []string{plan.StepEncryptionConfig}
	for _, cp := range controlPlanes {
		want = append(want, plan.StepEncryptionServer+" on "+cp)
	}
	want = append(want, plan.StepEncryptSecrets)
	if got := stepList(p); !slices.Equal(got, want) {
		t.Fatalf("the plan that enables encryption: %v; want %v", got, want)
	}
	var outputs []string
	outputs = append(outputs, h.mustApply(manifest, "-v").out)
	h.expectNoPlan(t, manifest, "enabling encryption")
	var hashes []string
	for _, cp := range controlPlanes {
		out, err := h.onHost(cp, "stat -c '%a %U' /etc/kubernetes/encryption/config.yaml && sha256sum </etc/kubernetes/encryption/config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		mode, hash, _ := strings.Cut(strings.TrimSpace(out), "\n")
		if mode != "600 root" {
			t.Errorf("%s: the encryption configuration is %q; want mode 600, owned by root", cp, mode)
		}
		hashes = append(hashes, hash)
	}
	if len(slices.Compact(slices.Clone(hashes))) != 1 {
		t.Errorf("the control planes hold different encryption configurations: %v", hashes)
	}

	first := h.writeMarkedSecret(t, c, "encrypted-1")
	h.expectStoredEncrypted(t, manifest, first, "key-1")

	outputs = append(outputs, h.mustApply(manifest, "-v", "--rotate-encryption-key").out)
	h.expectNoPlan(t, manifest, "the key rotation")
	second := h.writeMarkedSecret(t, c, "encrypted-2")
	h.expectStoredEncrypted(t, manifest, second, "key-2")
	for name, value := range map[string]string{"encrypted-1": first, "encrypted-2": second} {
		s, err := c.CoreV1().Secrets("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(s.Data["v"]); got != value {
			t.Errorf("Secret %s reads %q after the rotation; want %q", name, got, value)
		}
	}
	// The keys never leave the control planes: neither the current one nor the one rotated out
	// may appear in anything slipway printed, --verbose included.
	keys, err := h.onHost(controlPlanes[0], "sed -n 's/^ *secret: *//p' /etc/kubernetes/encryption/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(keys) == "" {
		t.Fatal("no key found in the encryption configuration")
	}
	for _, k := range strings.Fields(keys) {
		for _, out := range outputs {
			if strings.Contains(out, k) {
				t.Errorf("slipway printed an encryption key")
			}
		}
	}
}

// writeMarkedSecret writes a Secret whose value is a random marker, and returns the marker.
func (h *harness) writeMarkedSecret(t *testing.T, c kubernetes.Interface, name string) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	marker := "slipway-e2e-plain-" + hex.EncodeToString(b)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"v": marker}}
	if _, err := c.CoreV1().Secrets("default").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return marker
}

// expectStoredEncrypted reads etcd's raw data through a snapshot: the marker must not be in it
// (it was only ever written encrypted), and a value under the key's aescbc prefix must.
func (h *harness) expectStoredEncrypted(t *testing.T, manifest, marker, key string) {
	file := filepath.Join(h.dir, "encryption-"+key+".db")
	if r := h.slipway(nil, "etcd", "snapshot", "-m", manifest, "--file", file); r.code != 0 {
		t.Fatalf("etcd snapshot: exit code %d", r.code)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(marker)) {
		t.Errorf("etcd holds a Secret's value in plain text (%s)", marker)
	}
	if prefix := "k8s:enc:aescbc:v1:" + key + ":"; !bytes.Contains(data, []byte(prefix)) {
		t.Errorf("etcd holds no value encrypted with %s (no %q)", key, prefix)
	}
}

// expectNoPlan fails when apply would do anything more after what.
func (h *harness) expectNoPlan(t *testing.T, manifest, what string) {
	t.Helper()
	if p := h.plan(manifest); len(p.Steps) != 0 {
		t.Errorf("the plan after %s: %v; want nothing to do", what, stepList(p))
	}
}
