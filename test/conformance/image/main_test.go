package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/images"
)

// fakeRelease writes the part of a k8s.io/kubernetes module that the image reads, an agnhost
// binary and an e2e.test that lists images the way the real one does under an override.
func fakeRelease(t *testing.T, version string) (src, bin string) {
	t.Helper()
	src, bin = t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, agnhostDir, "VERSION"), version, 0o644)
	write(t, filepath.Join(src, agnhostDir, "porter/localhost.crt"), "CERT", 0o644)
	write(t, filepath.Join(src, agnhostDir, "porter/localhost.key"), "KEY", 0o600)
	write(t, filepath.Join(bin, "agnhost"), "agnhost binary", 0o755)
	// The real e2e.test reads promoterE2eRegistry from the file; this one takes its one line.
	write(t, filepath.Join(bin, "e2e.test"), `#!/bin/sh
[ "$1 $2" = "--list-images --kube-test-repo-list" ] || { echo "bad args: $*" >&2; exit 2; }
r=$(sed -n 's/^promoterE2eRegistry: //p' "$3")
echo "$r/agnhost:2.63.0"
echo "$r/agnhost:2.55"
echo "registry.k8s.io/pause:3.10.2"
`, 0o755)
	return src, bin
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestAgnhost(t *testing.T) {
	src, bin := fakeRelease(t, "2.63.0\n")
	tests := []struct {
		name, registry, ref string
	}{
		{"upstream", upstreamRegistry, "registry.k8s.io/e2e-test-images/agnhost:2.63.0"},
		{"override", "172.30.0.2:5000/e2e-test-images", "172.30.0.2:5000/e2e-test-images/agnhost:2.63.0"},
		{"trailing slash", "172.30.0.2:5000/e2e/", "172.30.0.2:5000/e2e/agnhost:2.63.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := agnhost(filepath.Join(bin, "agnhost"), src, tt.registry)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Refs, []string{tt.ref}) {
				t.Errorf("refs %v, want %s", s.Refs, tt.ref)
			}
			if got := string(repoList(tt.registry)); got != "promoterE2eRegistry: "+strings.TrimSuffix(tt.registry, "/")+"\n" {
				t.Errorf("repo list %q", got)
			}
		})
	}

	s, err := agnhost(filepath.Join(bin, "agnhost"), src, upstreamRegistry)
	if err != nil {
		t.Fatal(err)
	}
	built, err := images.Assemble([]images.Spec{s}, images.Options{Created: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := built[0].Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's agnhost runs as root with "/agnhost pause" unless a pod says otherwise.
	c := cfg.Config
	if c.User != "0:0" || !slices.Equal(c.Entrypoint, []string{"/agnhost"}) || !slices.Equal(c.Cmd, []string{"pause"}) || c.WorkingDir != "/" {
		t.Errorf("config %+v", c)
	}
	files := map[string]images.File{}
	for _, f := range s.Files {
		files[f.Name] = f
	}
	if files["agnhost-2"].Link != "agnhost" || string(files["localhost.crt"].Data) != "CERT" || string(files["localhost.key"].Data) != "KEY" ||
		files["localhost.key"].Mode != 0o644 || !strings.Contains(string(files["etc/group"].Data), "group-defined-in-image:x:50000:user-defined-in-image\n") {
		t.Errorf("files %+v", files)
	}
}

func TestAgnhostTag(t *testing.T) {
	tests := []struct {
		name, version string // "" writes no VERSION file
		want, err     string
	}{
		{"release", "2.63.0\n", "2.63.0", ""},
		{"no file", "", "", "agnhost's version"},
		{"blank", " \n", "", "not a tag"},
		{"not a tag", "2.63 beta", "", "not a tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := t.TempDir()
			if tt.version != "" {
				write(t, filepath.Join(src, agnhostDir, "VERSION"), tt.version, 0o644)
			}
			got, err := agnhostTag(src)
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("agnhostTag = %q, %v; want %q, error with %q", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestListed(t *testing.T) {
	_, bin := fakeRelease(t, "2.63.0")
	list := filepath.Join(t.TempDir(), "list.yaml")
	write(t, list, string(repoList("example.test/e2e")), 0o644)
	tests := []struct {
		name, e2eTest string
		refs          []string
		err           string
	}{
		{"named", filepath.Join(bin, "e2e.test"), []string{"example.test/e2e/agnhost:2.63.0"}, ""},
		{"another tag", filepath.Join(bin, "e2e.test"), []string{"example.test/e2e/agnhost:2.64.0"}, "the built agnhost and the suite disagree"},
		{"no e2e.test", filepath.Join(bin, "missing"), nil, "--list-images"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := listed(context.Background(), tt.e2eTest, list, tt.refs...)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err %v, want one with %q", err, tt.err)
			}
			if err == nil && !slices.Equal(got, []string{"example.test/e2e/agnhost:2.55", "example.test/e2e/agnhost:2.63.0", "registry.k8s.io/pause:3.10.2"}) {
				t.Errorf("listed %v", got)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	src, bin := fakeRelease(t, "2.63.0")
	out := filepath.Join(t.TempDir(), "images")
	if err := build(context.Background(), bin, src, out, "example.test/e2e", images.Options{Created: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	refs, err := images.Refs(filepath.Join(out, "conformance-images.tar"))
	if err != nil || !slices.Equal(refs, []string{"example.test/e2e/agnhost:2.63.0"}) {
		t.Errorf("archive refs %v, %v", refs, err)
	}
	if _, err := os.Stat(filepath.Join(out, "oci", "index.json")); err != nil {
		t.Errorf("no layout: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "kube-test-repo-list.yaml")); err != nil || string(b) != "promoterE2eRegistry: example.test/e2e\n" {
		t.Errorf("repo list %q, %v", b, err)
	}

	// A suite that wants another agnhost gets nothing written over the last good build.
	write(t, filepath.Join(src, agnhostDir, "VERSION"), "2.64.0", 0o644)
	if err := build(context.Background(), bin, src, out, "example.test/other", images.Options{}); err == nil {
		t.Fatal("built an agnhost the suite does not name")
	}
	if refs, _ := images.Refs(filepath.Join(out, "conformance-images.tar")); !slices.Equal(refs, []string{"example.test/e2e/agnhost:2.63.0"}) {
		t.Errorf("archive refs after a refused build %v", refs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "kube-test-repo-list.yaml")); string(b) != "promoterE2eRegistry: example.test/e2e\n" {
		t.Errorf("repo list after a refused build %q", b)
	}
}
