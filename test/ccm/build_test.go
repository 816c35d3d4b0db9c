package ccm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBuildVerifiesSums runs build.sh on copies of build/ccm whose go.sum was tampered with: a
// changed hash of a module the CCM compiles (its source, or its go.mod), or its line removed.
// Each build must fail before it compiles anything, naming the module, leave go.sum as it was
// (never "fixed" with what the proxy served) and produce no binary. The modules are those the
// real build uses, so the module cache (or the proxy) serves exactly what go.sum names: only the
// one changed line differs.
func TestBuildVerifiesSums(t *testing.T) {
	if testing.Short() {
		t.Skip("runs build.sh, which reads the CCM's modules from the module cache or the Go module proxy; skipped under -short")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "build.sh")
	module := filepath.Join(filepath.Dir(file), "..", "..", "build", "ccm")
	goMod, err := os.ReadFile(filepath.Join(module, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(module, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// gophercloud is the CCM's OpenStack client: a changed copy of it is the attack.
	const zipLine, modLine = "github.com/gophercloud/gophercloud/v2 v2.8.0 h1:", "github.com/gophercloud/gophercloud/v2 v2.8.0/go.mod h1:"
	for name, tc := range map[string]struct {
		edit func(line string) string // of each line of go.sum
		want []string
	}{
		"the source's hash changed": {
			edit: func(l string) string { return flipHash(l, zipLine) },
			want: []string{"github.com/gophercloud/gophercloud/v2@v2.8.0: checksum mismatch", "SECURITY ERROR"},
		},
		"the go.mod's hash changed": {
			edit: func(l string) string { return flipHash(l, modLine) },
			want: []string{"github.com/gophercloud/gophercloud/v2@v2.8.0/go.mod: checksum mismatch", "SECURITY ERROR"},
		},
		"the source's hash missing": {
			edit: func(l string) string {
				if strings.HasPrefix(l, zipLine) {
					return ""
				}
				return l + "\n"
			},
			want: []string{"missing go.sum entry", "github.com/gophercloud/gophercloud/v2"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var sum strings.Builder
			for _, l := range strings.SplitAfter(strings.TrimSuffix(string(goSum), "\n"), "\n") {
				sum.WriteString(tc.edit(strings.TrimSuffix(l, "\n")))
			}
			if sum.String() == string(goSum) {
				t.Fatal("go.sum was not changed: the line to change is not in build/ccm/go.sum")
			}
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), goMod, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte(sum.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			cache := t.TempDir()
			cmd := exec.Command("bash", script)
			// The caller's GOFLAGS=-mod=mod must not loosen the build.
			cmd.Env = append(os.Environ(), "SLIPWAY_CCM_MODULE="+dir, "SLIPWAY_CACHE="+cache, "GOFLAGS=-mod=mod")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err == nil {
				t.Fatalf("build.sh built the CCM from a tampered go.sum: %s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("build.sh's error does not say %q:\n%s", w, tail(stderr.Bytes(), 4096))
				}
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "go.sum")); string(after) != sum.String() {
				t.Error("the build rewrote go.sum")
			}
			if bins, _ := filepath.Glob(filepath.Join(cache, "ccm", "*", "bin", "*")); len(bins) > 0 {
				t.Errorf("the build left %q", bins)
			}
		})
	}
}

// flipHash returns line with the last character of its hash changed when it starts with prefix,
// and line as it is otherwise; with its newline either way.
func flipHash(line, prefix string) string {
	if !strings.HasPrefix(line, prefix) {
		return line + "\n"
	}
	// The hash is base64 ending in "=": change the character before it.
	i := len(line) - 2
	c := byte('A')
	if line[i] == 'A' {
		c = 'B'
	}
	return line[:i] + string(c) + line[i+1:] + "\n"
}
