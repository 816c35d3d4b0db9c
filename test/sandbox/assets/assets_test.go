package assets

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestRegistryServesLayout serves an OCI layout the way containerd asks a registry.k8s.io mirror.
func TestRegistryServesLayout(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	layer := static.NewLayer([]byte("pretend this is a tar"), types.OCIUncompressedLayer)
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "registry.k8s.io/coredns/coredns:v1.12.1"
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefAnnotation: ref})); err != nil {
		t.Fatal(err)
	}
	manifestDigest, _ := img.Digest()
	layerDigest, _ := layer.Digest()

	reg, err := Registry([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()

	for _, tt := range []struct {
		name, method, path string
		wantStatus         int
		wantBody           string
		wantDigest         string
	}{
		{name: "api root", method: "GET", path: "/v2/", wantStatus: 200},
		{name: "manifest by tag, as a mirror is asked", method: "GET", path: "/v2/coredns/coredns/manifests/v1.12.1?ns=registry.k8s.io",
			wantStatus: 200, wantDigest: manifestDigest.String()},
		{name: "manifest by digest", method: "HEAD", path: "/v2/coredns/coredns/manifests/" + manifestDigest.String(), wantStatus: 200},
		{name: "layer blob from disk", method: "GET", path: "/v2/coredns/coredns/blobs/" + layerDigest.String(),
			wantStatus: 200, wantBody: "pretend this is a tar"},
		{name: "unknown tag", method: "GET", path: "/v2/coredns/coredns/manifests/v0.0.1", wantStatus: 404},
		{name: "unknown blob", method: "GET", path: "/v2/coredns/coredns/blobs/sha256:" + zeros(64), wantStatus: 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			req.Header.Set("Accept", string(types.OCIManifestSchema1))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body %q, want %q", body, tt.wantBody)
			}
			if got := resp.Header.Get("Docker-Content-Digest"); tt.wantDigest != "" && got != tt.wantDigest {
				t.Errorf("Docker-Content-Digest %q, want %q", got, tt.wantDigest)
			}
		})
	}
}

// TestRegistryTakesPushes pushes an image the way a test pushes a workload's image, beside a
// layout's images, and pulls it back whole; a blob whose content does not match its digest is
// refused and not kept.
func TestRegistryTakesPushes(t *testing.T) {
	dir := t.TempDir()
	if _, err := layout.Write(dir, empty.Index); err != nil {
		t.Fatal(err)
	}
	reg, err := Registry([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	layer := static.NewLayer([]byte("the web server's binary"), types.OCIUncompressedLayer)
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/slipway-test/web:e2e", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pulling %s back: %v", ref, err)
	}
	want, _ := img.Digest()
	if d, err := got.Digest(); err != nil || d != want {
		t.Errorf("pulled digest %v (%v), want %v", d, err, want)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("pulled layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rc)
	rc.Close()
	if string(body) != "the web server's binary" {
		t.Errorf("pulled layer %q", body)
	}

	// A monolithic upload whose body is not what its digest says.
	bad := "sha256:" + strings.Repeat("ab", 32)
	resp, err := http.Post(srv.URL+"/v2/slipway-test/web/blobs/uploads/?digest="+bad, "application/octet-stream", strings.NewReader("not that"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Errorf("a blob that does not match its digest was taken: HTTP %d", resp.StatusCode)
	}
	resp, err = http.Head(srv.URL + "/v2/slipway-test/web/blobs/" + bad)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the refused blob is served: HTTP %d", resp.StatusCode)
	}
}

func TestRegistryRejectsUnnamedImages(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(empty.Image); err != nil {
		t.Fatal(err)
	}
	if _, err := Registry([]string{dir}); err == nil {
		t.Error("an image without a reference annotation was accepted")
	}
}

func TestFiles(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "Release"), []byte("Origin: test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Files(map[string]string{"/core:/stable:/v1.34/deb/": repo})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tt := range []struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		{"/core:/stable:/v1.34/deb/Release", 200, "Origin: test\n"},
		{"/core:/stable:/v1.33/deb/Release", 404, ""},
		{"/", 200, "/core:/stable:/v1.34/deb/\n"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus || (tt.wantBody != "" && string(body) != tt.wantBody) {
				t.Errorf("HTTP %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
	if _, err := Files(map[string]string{"/no-trailing-slash": repo}); err == nil {
		t.Error("a route prefix without a trailing slash was accepted")
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}
