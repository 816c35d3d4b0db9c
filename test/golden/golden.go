// Package golden checks rendered output against golden files and rewrites them on request. A
// test calls Check with the file's path and what it rendered; a difference fails the test with
// the file's name, the first lines that differ and the command that rewrites it. The files are
// rewritten by `go test <package> -update`, or, in every package at once, with
// SLIPWAY_UPDATE_GOLDEN=1 (`make golden`): a plain `go test ./... -update` fails in the
// packages that do not import golden, because their test binaries do not know the flag.
package golden

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Env is the environment variable that makes Update true in every test binary it reaches.
const Env = "SLIPWAY_UPDATE_GOLDEN"

var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them ("+Env+"=1 does it in every package)")

// Update reports whether golden files are to be rewritten: under -update, or with
// SLIPWAY_UPDATE_GOLDEN=1 in the environment.
func Update() bool {
	return *update || os.Getenv(Env) == "1"
}

// Check compares got with the golden file at path. Under Update it writes got to path instead,
// creating the directories it needs.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("rewriting golden file: %v", err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("rewriting golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("golden file %s does not exist: %s creates it", path, rerun(t))
	}
	if err != nil {
		t.Fatalf("reading golden file: %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("output differs from golden file %s (- golden, + output); %s rewrites it:\n%s", path, rerun(t), Diff(want, got))
	}
}

// rerun is the command that rewrites the golden files of the running test, from the module root.
func rerun(t testing.TB) string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("`go test %s -run '%s' -update` (or `make golden`)", packageDir(), strings.Join(parts, "/"))
}

// packageDir is the directory of the package under test relative to the module root, as `go
// test` takes it ("./pkg/scripts"), or "." when the root is not found.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
