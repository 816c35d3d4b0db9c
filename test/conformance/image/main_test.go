package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

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
	write(t, filepath.Join(bin, "nnp"), "nnp binary", 0o755)
	write(t, filepath.Join(bin, "sample-apiserver"), "sample-apiserver binary", 0o755)
	write(t, filepath.Join(src, "test/images/nautilus/html/data.json"), `{"image": "nautilus.jpg"}`, 0o644)
	// The real e2e.test reads promoterE2eRegistry from the file; this one takes its one line.
	write(t, filepath.Join(bin, "e2e.test"), `#!/bin/sh
[ "$1 $2" = "--list-images --kube-test-repo-list" ] || { echo "bad args: $*" >&2; exit 2; }
r=$(sed -n 's/^promoterE2eRegistry: //p' "$3")
echo "$r/agnhost:2.63.0"
echo "$r/agnhost:2.55"
echo "$r/busybox:1.36.1-1"
echo "$r/busybox:1.37.0-1"
echo "$r/glibc-dns-testing:2.0.0"
echo "$r/nginx:1.15-4"
echo "$r/nginx:1.27-0"
echo "$r/nautilus:1.8"
echo "$r/nonewprivs:1.4"
echo "$r/sample-apiserver:1.29.2"
echo "registry.k8s.io/etcd:3.6.8-0"
echo "registry.k8s.io/pause:3.10.2"
`, 0o755)
	return src, bin
}

// fakeUserland writes a root filesystem tarball like test/conformance/userland/build.sh's: a
// shell, a device node and /proc content that must be left out, and a busybox that lists its
// applets the way the real one does.
func fakeUserland(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rootfs.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	entries := []struct {
		hdr  tar.Header
		data string
	}{
		{tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "./bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin"}, ""},
		{tar.Header{Name: "./usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "./usr/bin/dash", Typeflag: tar.TypeReg, Mode: 0o755}, "dash"},
		{tar.Header{Name: "./usr/bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755}, "#!/bin/sh\nprintf '/bin/sh\\nusr/bin/env\\n/bin/sh\\nsbin/ifconfig\\n'\n"},
		{tar.Header{Name: "./usr/bin/bash-static", Typeflag: tar.TypeReg, Mode: 0o755}, "bash"},
		{tar.Header{Name: "./dev/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "./dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3}, ""},
		{tar.Header{Name: "./proc/cpuinfo", Typeflag: tar.TypeReg, Mode: 0o444}, "cpu"},
	}
	for _, e := range entries {
		e.hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
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
			if err == nil && !slices.Equal(got, []string{"example.test/e2e/agnhost:2.55", "example.test/e2e/agnhost:2.63.0",
				"example.test/e2e/busybox:1.36.1-1", "example.test/e2e/busybox:1.37.0-1", "example.test/e2e/glibc-dns-testing:2.0.0",
				"example.test/e2e/nautilus:1.8", "example.test/e2e/nginx:1.15-4", "example.test/e2e/nginx:1.27-0", "example.test/e2e/nonewprivs:1.4",
				"example.test/e2e/sample-apiserver:1.29.2", "registry.k8s.io/etcd:3.6.8-0", "registry.k8s.io/pause:3.10.2"}) {
				t.Errorf("listed %v", got)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	src, bin := fakeRelease(t, "2.63.0")
	out := filepath.Join(t.TempDir(), "images")
	userland := fakeUserland(t)
	if err := build(context.Background(), bin, src, userland, out, "example.test/e2e", images.Options{Created: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	want := []string{"example.test/e2e/agnhost:2.55", "example.test/e2e/agnhost:2.63.0", "example.test/e2e/busybox:1.36.1-1", "example.test/e2e/busybox:1.37.0-1",
		"example.test/e2e/glibc-dns-testing:2.0.0", "example.test/e2e/nautilus:1.8", "example.test/e2e/nginx:1.15-4", "example.test/e2e/nginx:1.27-0",
		"example.test/e2e/nonewprivs:1.4", "example.test/e2e/sample-apiserver:1.29.2"}
	refs, err := images.Refs(filepath.Join(out, "conformance-images.tar"))
	slices.Sort(refs)
	if err != nil || !slices.Equal(refs, want) {
		t.Errorf("archive refs %v, %v; want %v", refs, err, want)
	}
	p, err := layout.FromPath(filepath.Join(out, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]map[string]string{} // ref -> path -> what it is
	configs := map[string]v1.Config{}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		files[d.Annotations[images.RefAnnotation]] = flatten(t, img)
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		configs[d.Annotations[images.RefAnnotation]] = cfg.Config
	}
	agn := files["example.test/e2e/agnhost:2.63.0"]
	if agn["agnhost"] != "file" || agn["usr/bin/dash"] != "file" || agn["bin"] != "link usr/bin" || agn["etc/passwd"] != "file" {
		t.Errorf("agnhost is not on the userland: %v", agn)
	}
	for _, gone := range []string{"dev/null", "proc/cpuinfo"} {
		if _, ok := agn[gone]; ok {
			t.Errorf("agnhost's image has %s", gone)
		}
	}
	bb := files["example.test/e2e/busybox:1.37.0-1"]
	if bb["bin/busybox"] != "file" || bb["bin/sh"] != "link /bin/bash-static" || bb["bin/bash-static"] != "file" ||
		bb["bin/env"] != "link /bin/busybox" || bb["bin/ifconfig"] != "link /bin/busybox" || bb["sbin/ifconfig"] != "" {
		t.Errorf("busybox's applets: %v", bb)
	}
	if _, ok := bb["usr/bin/dash"]; ok {
		t.Error("busybox's image holds the userland")
	}
	if dns := files["example.test/e2e/glibc-dns-testing:2.0.0"]; dns["usr/bin/dash"] != "file" || dns["agnhost"] != "" {
		t.Errorf("glibc-dns-testing is not the userland alone: %v", dns)
	}
	if ng := files["example.test/e2e/nginx:1.27-0"]; ng["etc/nginx/nginx.conf"] != "file" || ng["usr/share/nginx/html/index.html"] != "file" || ng["usr/bin/dash"] != "file" {
		t.Errorf("nginx: %v", ng)
	}
	if na := files["example.test/e2e/nautilus:1.8"]; na["data.json"] != "file" || na["agnhost"] != "file" {
		t.Errorf("nautilus: %v", na)
	}
	if nnp := files["example.test/e2e/nonewprivs:1.4"]; nnp["usr/local/bin/nnp"] != "file" || nnp["bin/busybox"] != "file" {
		t.Errorf("nonewprivs: %v", nnp)
	}
	// The aggregator spec gives sample-apiserver arguments only; it listens on 443, as root.
	sa, saCfg := files["example.test/e2e/sample-apiserver:1.29.2"], configs["example.test/e2e/sample-apiserver:1.29.2"]
	if sa["sample-apiserver"] != "file" || sa["etc/passwd"] != "file" || sa["usr/bin/dash"] != "" {
		t.Errorf("sample-apiserver: %v", sa)
	}
	if !slices.Equal(saCfg.Entrypoint, []string{"/sample-apiserver"}) || saCfg.Cmd != nil || saCfg.User != "0:0" {
		t.Errorf("sample-apiserver's config %+v", saCfg)
	}
	if _, err := os.Stat(filepath.Join(out, "oci", "index.json")); err != nil {
		t.Errorf("no layout: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "kube-test-repo-list.yaml")); err != nil || string(b) != "promoterE2eRegistry: example.test/e2e\n" {
		t.Errorf("repo list %q, %v", b, err)
	}

	// A suite that wants another agnhost gets nothing written over the last good build.
	write(t, filepath.Join(src, agnhostDir, "VERSION"), "2.64.0", 0o644)
	if err := build(context.Background(), bin, src, userland, out, "example.test/other", images.Options{}); err == nil {
		t.Fatal("built an agnhost the suite does not name")
	}
	refs, _ = images.Refs(filepath.Join(out, "conformance-images.tar"))
	if slices.Sort(refs); !slices.Equal(refs, want) {
		t.Errorf("archive refs after a refused build %v", refs)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "kube-test-repo-list.yaml")); string(b) != "promoterE2eRegistry: example.test/e2e\n" {
		t.Errorf("repo list after a refused build %q", b)
	}
}

// flatten lists what an image's filesystem holds: "file", "dir" or "link <target>" by path.
func flatten(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		switch hdr.Typeflag {
		case tar.TypeReg:
			out[name] = "file"
		case tar.TypeDir:
			out[name] = "dir"
		case tar.TypeSymlink:
			out[name] = "link " + hdr.Linkname
		default:
			out[name] = fmt.Sprintf("type %c", hdr.Typeflag)
		}
	}
}
