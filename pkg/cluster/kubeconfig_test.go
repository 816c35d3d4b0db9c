package cluster

import (
	"os"
	"path/filepath"
	"testing"
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
