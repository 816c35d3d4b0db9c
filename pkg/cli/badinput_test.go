package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runWith is run with any reader as stdin, and reports how many bytes the command allocated.
func runWith(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, code int, allocated uint64) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewRootCommand(Streams{In: stdin, Out: &out, Err: &errb})
	cmd.SetArgs(args)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := cmd.ExecuteContext(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		errb.WriteString("Error: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), ExitCode(err), after.TotalAlloc - before.TotalAlloc
}

// endless is an input that never ends, like /dev/zero on stdin.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestBadInputIsBounded: inputs from outside are read with a limit, so an endless or huge
// input is an invalid input (exit 3) with a message naming it and the limit, and slipway's
// memory stays small; before the limits, -m /dev/zero grew until the runtime died (exit 2).
func TestBadInputIsBounded(t *testing.T) {
	write := tempWriter(t)
	manifest := "apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.34.1}\n" +
		"controlPlane: {hosts: [{publicAddress: 10.0.0.1, sshPrivateKeyFile: id}]}\n"
	// 2 MiB of list items: parsed, they took 490 MB and printed 44 MB of problems.
	bigManifest := write("big.yaml", manifest+"workers:\n"+strings.Repeat("- a\n", 2<<20/4))
	m := write("m.yaml", manifest)
	// Terraform output with 7 MiB of the user's own outputs (3.5 million numbers): not
	// slipway's business, and loaded without parsing them (parsed, they took 560 MB).
	otherOutputs := write("other.json", `{"slipway_api": {"value": {"endpoint": "10.0.0.1"}}, "big": {"value": [`+strings.Repeat("0,", 7<<20/2)+`0]}}`)
	bigContract := write("contract.json", `{"slipway_workers": {"value": {"p": {"providerSpec": {"labels": {"a": "`+strings.Repeat("x", 2<<20)+`"}}}}}}`)
	tests := []struct {
		name     string
		stdin    io.Reader
		args     []string
		code     int
		want     string
		maxAlloc uint64
	}{
		{"manifest from /dev/zero", nil, []string{"config", "dump", "-m", "/dev/zero"}, ExitConfig, "/dev/zero is larger than 1 MiB", 16 << 20},
		{"endless manifest on stdin", endless{}, []string{"config", "dump", "-m", "-"}, ExitConfig, "the manifest on stdin is larger than 1 MiB", 16 << 20},
		{"2 MiB manifest", nil, []string{"config", "dump", "-m", bigManifest}, ExitConfig, "big.yaml is larger than 1 MiB", 16 << 20},
		{"terraform output from /dev/zero", nil, []string{"config", "dump", "-m", m, "-t", "/dev/zero"}, ExitConfig, "/dev/zero is larger than 8 MiB", 64 << 20},
		{"endless terraform output on stdin", endless{}, []string{"config", "dump", "-m", m, "-t", "-"}, ExitConfig, "the Terraform output on stdin is larger than 8 MiB", 64 << 20},
		{"large outputs of the user's own", nil, []string{"config", "dump", "-m", m, "-t", otherOutputs}, ExitOK, "", 128 << 20},
		{"large slipway outputs", nil, []string{"config", "dump", "-m", m, "-t", bigContract}, ExitConfig, "slipway's outputs (slipway_*) are 2097", 64 << 20},
		{"apply with a manifest from /dev/zero", nil, []string{"apply", "-m", "/dev/zero", "--dry-run"}, ExitConfig, "/dev/zero is larger than 1 MiB", 16 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := tt.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			_, stderr, code, alloc := runWith(t, stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%.2000s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr does not contain %q:\n%.2000s", tt.want, stderr)
			}
			if len(stderr) > 64<<10 {
				t.Errorf("stderr is %d bytes: problems must be listed briefly", len(stderr))
			}
			t.Logf("allocated %d KiB", alloc>>10)
			if alloc > tt.maxAlloc {
				t.Errorf("allocated %d MiB, want at most %d MiB", alloc>>20, tt.maxAlloc>>20)
			}
		})
	}
}

// TestTerraformFailureIsAnEnvironmentError: -t DIR runs the real terraform; when it fails (here
// on a broken state file) the output is not invalid, the environment is: exit 1, not 3.
func TestTerraformFailureIsAnEnvironmentError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the terraform binary; skipped under -short")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("terraform is not installed, and CI must provide it: %v", err)
		}
		t.Skipf("terraform is not installed (%v); .ci/run installs it", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(m, []byte("apiVersion: slipway.dev/v1beta1\nkind: Cluster\nname: x\nversions: {kubernetes: v1.34.1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code, _ := runWith(t, strings.NewReader(""), "config", "dump", "-m", m, "-t", dir)
	if code != ExitFailure || !strings.Contains(stderr, "terraform output -json failed in "+dir) {
		t.Fatalf("exit code %d, want %d with terraform's failure; stderr:\n%s", code, ExitFailure, stderr)
	}
}
