// Package gosum checks that a build script builds only from the go.sum committed beside its
// module: given a copy of the module whose go.sum was tampered with (a changed hash of a module
// it compiles, of that module's go.mod, or the line removed), the build must fail before it
// compiles anything, naming the module, leave go.sum as it was (never "fixed" with what the
// proxy served) and leave no binary. The tampered modules are ones the real build uses, so the
// module cache (or the proxy) serves exactly what go.sum names: only the changed line differs.
package gosum

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Build runs the build of the module copied to dir, with its cache under cache. It returns the
// command to run; its standard error is what the test reads.
type Build func(dir, cache string) *exec.Cmd

// CheckRefused tampers with the go.sum of the module in moduleDir in three ways for module at
// version (e.g. "github.com/gophercloud/gophercloud/v2", "v2.8.0") and runs build on each copy.
// built lists what a build left in cache (the binaries it must not have made).
func CheckRefused(t *testing.T, moduleDir, module, version string, build Build, built func(cache string) []string) {
	t.Helper()
	goMod, err := os.ReadFile(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(moduleDir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	zipLine, modLine := module+" "+version+" h1:", module+" "+version+"/go.mod h1:"
	for _, tc := range []struct {
		name string
		edit func(line string) string // of each line of go.sum
		want []string
	}{
		{"the source's hash changed", func(l string) string { return FlipHash(l, zipLine) },
			[]string{module + "@" + version + ": checksum mismatch", "SECURITY ERROR"}},
		{"the go.mod's hash changed", func(l string) string { return FlipHash(l, modLine) },
			[]string{module + "@" + version + "/go.mod: checksum mismatch", "SECURITY ERROR"}},
		{"the source's hash missing", func(l string) string {
			if strings.HasPrefix(l, zipLine) {
				return ""
			}
			return l + "\n"
		}, []string{"missing go.sum entry", module}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var sum strings.Builder
			for _, l := range strings.SplitAfter(strings.TrimSuffix(string(goSum), "\n"), "\n") {
				sum.WriteString(tc.edit(strings.TrimSuffix(l, "\n")))
			}
			if sum.String() == string(goSum) {
				t.Fatalf("go.sum was not changed: %s %s is not in %s/go.sum", module, version, moduleDir)
			}
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), goMod, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte(sum.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			cache := t.TempDir()
			cmd := build(dir, cache)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err == nil {
				t.Fatalf("the build succeeded from a tampered go.sum: %s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("the build's error does not say %q:\n%s", w, tail(stderr.String(), 4096))
				}
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "go.sum")); string(after) != sum.String() {
				t.Error("the build rewrote go.sum")
			}
			if bins := built(cache); len(bins) > 0 {
				t.Errorf("the build left %q", bins)
			}
		})
	}
}

// FlipHash returns line with the last character of its hash changed when it starts with
// prefix, and line as it is otherwise; with its newline either way.
func FlipHash(line, prefix string) string {
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

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
