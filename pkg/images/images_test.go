package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeBinary writes content as an executable with the given mode and time, standing in for a
// static binary: assembly only copies its bytes.
func fakeBinary(t *testing.T, content string, mode os.FileMode, mtime time.Time) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func digests(t *testing.T, specs []Spec, o Options) []string {
	t.Helper()
	built, err := Assemble(specs, o)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range built {
		d, err := b.Image.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

func TestAssembleIsReproducible(t *testing.T) {
	epoch := Options{Created: time.Unix(0, 0).UTC()}
	old, now := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()
	a := fakeBinary(t, "#!binary v1", 0o700, old)
	b := fakeBinary(t, "#!binary v1", 0o755, now)
	ref := digests(t, []Spec{MachineController(a, "v1.0.0", "abc"), CloudControllerManager(a)}, epoch)
	if ref[0] == ref[1] {
		t.Fatal("two different images got one digest")
	}
	tests := []struct {
		name  string
		specs []Spec
		o     Options
		same  bool
	}{
		{"same bytes from another file, mode and time", []Spec{MachineController(b, "v1.0.0", "abc"), CloudControllerManager(b)}, epoch, true},
		{"another binary", []Spec{MachineController(fakeBinary(t, "#!binary v2", 0o755, old), "v1.0.0", "abc"), CloudControllerManager(a)}, epoch, false},
		{"another version", []Spec{MachineController(a, "v1.0.1", "abc"), CloudControllerManager(a)}, epoch, false},
		{"another SOURCE_DATE_EPOCH", []Spec{MachineController(a, "v1.0.0", "abc"), CloudControllerManager(a)}, Options{Created: old}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := digests(t, tt.specs, tt.o)
			if (got[0] == ref[0]) != tt.same {
				t.Errorf("machine-controller digest %s, first build %s; want equal: %v", got[0], ref[0], tt.same)
			}
		})
	}
}

// entry is one tar entry as the image holds it.
type entry struct {
	hdr  tar.Header
	data []byte
}

func layerEntries(t *testing.T, l v1.Layer) []entry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []entry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out = append(out, entry{*h, data})
	}
}

func TestAssembleContents(t *testing.T) {
	created := time.Unix(1700000000, 0).UTC()
	bin := fakeBinary(t, "static binary", 0o600, time.Now())
	built, err := Assemble([]Spec{MachineController(bin, "v1.2.3", "0123abc"), CloudControllerManager(bin)}, Options{Created: created})
	if err != nil {
		t.Fatal(err)
	}
	if got := built[0].Refs; !slices.Equal(got, []string{"ghcr.io/slipway-dev/machine-controller:v1.2.3"}) {
		t.Errorf("machine-controller refs %v", got)
	}
	if got := built[1].Refs; !slices.Equal(got, []string{"registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"}) {
		t.Errorf("CCM refs %v", got)
	}
	for i, want := range []struct{ path, entrypoint, cmd, version string }{
		{"machine-controller", "/machine-controller", "", "v1.2.3"},
		{"bin/openstack-cloud-controller-manager", "", "/bin/openstack-cloud-controller-manager", "v1.34.1"},
	} {
		img := built[i].Image
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Config
		if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != want.entrypoint || strings.Join(c.Cmd, " ") != want.cmd ||
			c.Labels["org.opencontainers.image.version"] != want.version || c.Labels["org.opencontainers.image.source"] == "" ||
			!cfg.Created.Time.Equal(created) || cfg.Architecture != "amd64" || cfg.OS != "linux" {
			t.Errorf("%s: config %+v created %v", want.path, c, cfg.Created)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 2 {
			t.Fatalf("%s: %d layers, %v", want.path, len(layers), err)
		}
		top := layerEntries(t, layers[1])
		last := top[len(top)-1]
		if last.hdr.Name != want.path || last.hdr.Mode != 0o755 || last.hdr.Uid != 0 || string(last.data) != "static binary" {
			t.Errorf("%s: binary entry %+v", want.path, last.hdr)
		}
	}
	if cfg, _ := built[0].Image.ConfigFile(); cfg.Config.Labels["org.opencontainers.image.revision"] != "0123abc" {
		t.Errorf("revision label %q", cfg.Config.Labels["org.opencontainers.image.revision"])
	}
	base0, _ := built[0].Image.Layers()
	base1, _ := built[1].Image.Layers()
	d0, _ := base0[0].Digest()
	d1, _ := base1[0].Digest()
	if d0 != d1 {
		t.Errorf("the images do not share their base layer: %s, %s", d0, d1)
	}
	checkBase(t, layerEntries(t, base0[0]), created)
}

func TestAssembleExtraFiles(t *testing.T) {
	bin := fakeBinary(t, "static binary", 0o755, time.Now())
	s := Spec{
		Refs: []string{"example.test/tool:v1"}, Binary: bin, Path: "tool", Entrypoint: []string{"/tool"}, User: "0:0",
		Files: []File{
			{Name: "tool-2", Link: "tool"},
			{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n")},
			{Name: "uploads/", Mode: 0o755},
			{Name: "/certs/tls.key", Mode: 0o600, Data: []byte("key")},
		},
	}
	built, err := Assemble([]Spec{s}, Options{Created: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := built[0].Image.ConfigFile()
	if err != nil || cfg.Config.User != "0:0" {
		t.Fatalf("user %q, %v", cfg.Config.User, err)
	}
	layers, err := built[0].Image.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	got := map[string]entry{}
	for _, e := range layerEntries(t, layers[1]) {
		got[e.hdr.Name] = e
	}
	tests := []struct {
		name     string
		typeflag byte
		mode     int64
		link     string
		data     string
	}{
		{"tool", tar.TypeReg, 0o755, "", "static binary"},
		{"tool-2", tar.TypeSymlink, 0o777, "tool", ""},
		{"etc/", tar.TypeDir, 0o755, "", ""},
		{"etc/passwd", tar.TypeReg, 0o644, "", "root:x:0:0:root:/root:/sbin/nologin\n"},
		{"uploads/", tar.TypeDir, 0o755, "", ""},
		{"certs/tls.key", tar.TypeReg, 0o600, "", "key"},
	}
	for _, tt := range tests {
		e, ok := got[tt.name]
		if !ok {
			t.Errorf("%s missing from the top layer", tt.name)
			continue
		}
		if e.hdr.Typeflag != tt.typeflag || e.hdr.Mode != tt.mode || e.hdr.Linkname != tt.link || string(e.data) != tt.data {
			t.Errorf("%s: type %c mode %o link %q data %q", tt.name, e.hdr.Typeflag, e.hdr.Mode, e.hdr.Linkname, e.data)
		}
	}
	s.Files = append(s.Files, File{Name: "tool", Mode: 0o644})
	if _, err := Assemble([]Spec{s}, Options{}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a file over the binary: err %v", err)
	}
}

func checkBase(t *testing.T, entries []entry, created time.Time) {
	t.Helper()
	var names []string
	files := map[string]entry{}
	for _, e := range entries {
		names = append(names, e.hdr.Name)
		files[e.hdr.Name] = e
		owner := 0
		if strings.HasPrefix(e.hdr.Name, "home/nonroot") {
			owner = NonRoot
		}
		if e.hdr.Uid != owner || e.hdr.Gid != owner || !e.hdr.ModTime.Equal(created) || e.hdr.Uname != "" {
			t.Errorf("%s: owner %d:%d (%q), time %v", e.hdr.Name, e.hdr.Uid, e.hdr.Gid, e.hdr.Uname, e.hdr.ModTime)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries not sorted: %v", names)
	}
	for _, want := range []string{"etc/", "etc/group", "etc/nsswitch.conf", "etc/passwd", "etc/ssl/certs/ca-certificates.crt", "home/nonroot/", "tmp/"} {
		if _, ok := files[want]; !ok {
			t.Errorf("base layer lacks %s: %v", want, names)
		}
	}
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") || !strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("user 65532 missing: %s%s", files["etc/passwd"].data, files["etc/group"].data)
	}
	if m := files["tmp/"].hdr.Mode; m != 0o1777 {
		t.Errorf("/tmp mode %o", m)
	}
	rest, n := files["etc/ssl/certs/ca-certificates.crt"].data, 0
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Fatalf("CA bundle certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("CA bundle: %d certificates, %d bytes left over", n, len(rest))
	}
}

func TestArchive(t *testing.T) {
	bin := fakeBinary(t, "static binary", 0o755, time.Now())
	mc, err := MachineController(bin, "v1.2.3", "abc").Tagged("latest")
	if err != nil {
		t.Fatal(err)
	}
	built, err := Assemble([]Spec{mc, CloudControllerManager(bin)}, Options{Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var sums [2][32]byte
	for i := range sums {
		p := filepath.Join(dir, "a"+string(rune('0'+i))+".tar")
		if err := WriteArchive(p, built, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = sha256.Sum256(data)
	}
	if sums[0] != sums[1] {
		t.Error("two archives of the same images differ")
	}
	archive := filepath.Join(dir, "a0.tar")
	refs, err := Refs(archive)
	want := []string{"ghcr.io/slipway-dev/machine-controller:v1.2.3", "ghcr.io/slipway-dev/machine-controller:latest", "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"}
	if err != nil || !slices.Equal(refs, want) {
		t.Errorf("Refs = %v, %v; want %v", refs, err, want)
	}
	// The docker side: manifest.json, as docker load reads it, gives the same image (the same
	// configuration, which docker's image ID is the digest of; the manifest docker makes differs).
	for i, ref := range []string{want[1], want[2]} {
		tag, _ := name.NewTag(ref)
		img, err := tarball.ImageFromPath(archive, &tag)
		if err != nil {
			t.Fatalf("%s from manifest.json: %v", ref, err)
		}
		got, _ := img.ConfigName()
		wantD, _ := built[i].Image.ConfigName()
		if got != wantD {
			t.Errorf("%s: manifest.json gives %s, want %s", ref, got, wantD)
		}
	}
	// The OCI side: a layout directory with the same index.
	ld := filepath.Join(dir, "layout")
	if err := WriteLayout(ld, built); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(ld)
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := p.ImageIndex()
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 3 || im.Manifests[0].Digest != im.Manifests[1].Digest || im.Manifests[1].Annotations[RefAnnotation] != want[1] {
		t.Errorf("layout index %+v", im.Manifests)
	}
}

func TestRefsErrors(t *testing.T) {
	dir := t.TempDir()
	notTar := filepath.Join(dir, "x.tar")
	os.WriteFile(notTar, []byte("hello"), 0o644)
	for _, tt := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none.tar"), "no such file"},
		{"not a tar", notTar, "reading"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Refs(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Refs(%s) = %v, want an error containing %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestCreatedFrom(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		err  bool
	}{{"", 0, false}, {"1700000000", 1700000000, false}, {"-5", 0, true}, {"yesterday", 0, true}} {
		got, err := CreatedFrom(tt.in)
		if (err != nil) != tt.err || (err == nil && got.Unix() != tt.want) {
			t.Errorf("CreatedFrom(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestGitVersion(t *testing.T) {
	if v, r := GitVersion(context.Background(), t.TempDir()); v != "dev" || r != "" {
		t.Errorf("outside a checkout: %q, %q; want dev and no revision", v, r)
	}
	if MachineController("", "dev", "").Refs[0] != "ghcr.io/slipway-dev/machine-controller:latest" {
		t.Error("a build without a version is not tagged latest")
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	v, r := GitVersion(context.Background(), filepath.Join("..", ".."))
	if v == "dev" || len(r) != 40 {
		t.Errorf("in this checkout: %q, %q; want git describe and a commit", v, r)
	}
}
