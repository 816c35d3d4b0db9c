package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteKubeconfigToAFile: --file writes the kubeconfig (which holds a private key) with mode
// 0600 whatever the umask, replacing a file that was readable by others; - and the admin
// kubeconfig's default print it.
func TestWriteKubeconfigToAFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jane.conf")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeKubeconfig(Streams{Out: &out}, p, []byte("key")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || out.Len() != 0 {
		t.Fatalf("mode %v (%v), printed %q; want 0600 and nothing printed", fi.Mode().Perm(), err, out.String())
	}
	if data, _ := os.ReadFile(p); string(data) != "key" {
		t.Errorf("file holds %q", data)
	}
	for _, file := range []string{"-", ""} {
		out.Reset()
		if err := writeKubeconfig(Streams{Out: &out}, file, []byte("key")); err != nil || out.String() != "key" {
			t.Errorf("--file %q: printed %q, %v", file, out.String(), err)
		}
	}
}
