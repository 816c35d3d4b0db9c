package images

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGoBuildVerifiesSums builds, with GoBuild, a module shaped like this repository (a
// cmd/machine-controller using golang.org/x/sync at the version slipway's go.mod requires,
// which the module cache holds), whose go.sum has that module's hash changed, or lacks it. Each
// build must fail naming the module, even with GOFLAGS=-mod=mod in the caller's environment,
// and leave go.sum as it was.
func TestGoBuildVerifiesSums(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; skipped under -short")
	}
	_, file, _, _ := runtime.Caller(0)
	rootSum, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	const mod = "golang.org/x/sync v0.24.0"
	var lines []string
	for _, l := range strings.Split(string(rootSum), "\n") {
		if strings.HasPrefix(l, mod+" ") || strings.HasPrefix(l, mod+"/go.mod ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("slipway's go.sum has %d lines for %s, want 2", len(lines), mod)
	}
	tampered := lines[0][:strings.Index(lines[0], " h1:")] + " h1:" + strings.Repeat("A", 43) + "="
	t.Setenv("GOFLAGS", "-mod=mod")
	for name, tc := range map[string]struct {
		sum  string
		want string
	}{
		"the hash changed": {tampered + "\n" + lines[1] + "\n", "golang.org/x/sync@v0.24.0: checksum mismatch"},
		"the hash missing": {lines[1] + "\n", "missing go.sum entry"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for path, content := range map[string]string{
				"go.mod": "module example.com/mc\n\ngo 1.25\n\nrequire " + mod + "\n",
				"go.sum": tc.sum,
				"cmd/machine-controller/main.go": "package main\n\nimport \"golang.org/x/sync/errgroup\"\n\n" +
					"func main() { var g errgroup.Group; _ = g.Wait() }\n",
			} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			err := GoBuild(context.Background(), root, "v0.0.0-test", filepath.Join(root, "bin", "machine-controller"), &log)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("GoBuild: %v; want an error saying %q", err, tc.want)
			}
			if after, _ := os.ReadFile(filepath.Join(root, "go.sum")); string(after) != tc.sum {
				t.Errorf("the build rewrote go.sum:\n%s", after)
			}
		})
	}
}

// TestCCMModuleVersion: build/ccm/go.mod, which BuildCCM builds from, requires the release that
// the image is tagged with (addons.OpenStackCCMImage); test/ccm/build.sh refuses to build
// another.
func TestCCMModuleVersion(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "build", "ccm", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require ")); len(f) >= 2 && f[0] == "k8s.io/cloud-provider-openstack" {
			got = f[1]
		}
	}
	if got != CCMVersion() {
		t.Errorf("build/ccm/go.mod requires k8s.io/cloud-provider-openstack %q; the image is tagged %s", got, CCMVersion())
	}
}
