package scripts_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/scripts"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares a rendered script with testdata/<name>.golden (rewritten under -update) and
// checks that bash can parse it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("script differs from %s (run with -update to accept):\n%s", path, got)
	}
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(got)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("bash -n rejects %s: %v\n%s", name, err, out)
	}
}

func TestProbeGolden(t *testing.T) {
	golden(t, "probe", scripts.Probe())
}
