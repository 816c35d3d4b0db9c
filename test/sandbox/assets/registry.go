package assets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefAnnotation is the index annotation that names an image by its full upstream reference.
const RefAnnotation = "io.containerd.image.name"

// Registry returns a registry handler serving every image of the given OCI layouts under its
// reference without the registry host: registry.k8s.io/coredns/coredns:v1.12.1 is served as
// /v2/coredns/coredns/manifests/v1.12.1, which is what containerd asks a registry.k8s.io mirror.
// Blobs are read from the layouts on disk; only manifests are held in memory.
//
// The registry also takes pushes, as any registry does: tests push images they build (a
// workload for new nodes to pull), and the pushed blobs are kept in memory beside the read-only
// layouts for as long as the registry runs.
func Registry(layouts []string) (http.Handler, error) {
	reg := registry.New(registry.WithBlobHandler(&layoutBlobs{dirs: layouts}), registry.Logger(discardLogger()))
	for _, dir := range layouts {
		if err := loadManifests(reg, dir); err != nil {
			return nil, fmt.Errorf("loading image layout %s: %w", dir, err)
		}
	}
	return reg, nil
}

// loadManifests PUTs each image manifest of a layout into the registry under its reference. The
// registry does not check that blobs exist at PUT, and they do, in the layout.
func loadManifests(reg http.Handler, dir string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		return err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, desc := range im.Manifests {
		ref := desc.Annotations[RefAnnotation]
		repo, tag, ok := splitReference(ref)
		if !ok {
			return fmt.Errorf("manifest %s has no usable %s annotation (%q)", desc.Digest, RefAnnotation, ref)
		}
		rc, err := p.Blob(desc.Digest)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		req := httptest.NewRequest(http.MethodPut, "/v2/"+repo+"/manifests/"+tag, bytes.NewReader(body))
		req.Header.Set("Content-Type", string(desc.MediaType))
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			return fmt.Errorf("storing manifest of %s: HTTP %d: %s", ref, rec.Code, rec.Body.String())
		}
	}
	return nil
}

// splitReference turns registry.k8s.io/coredns/coredns:v1.12.1 into coredns/coredns and v1.12.1.
func splitReference(ref string) (repo, tag string, ok bool) {
	slash := strings.Index(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if slash < 0 || colon < slash {
		return "", "", false
	}
	return ref[slash+1 : colon], ref[colon+1:], true
}

// layoutBlobs finds blobs in the blobs/ directories of several layouts, then among the blobs
// pushed since the registry started. Files in a layout are named by their digest and never
// rewritten, so Stat trusts the name instead of hashing gigabytes. The registry checks a pushed
// blob's digest and size while Put reads it.
type layoutBlobs struct {
	dirs []string

	mu     sync.Mutex
	pushed map[v1.Hash][]byte
}

func (l *layoutBlobs) find(h v1.Hash) (string, os.FileInfo, error) {
	for _, dir := range l.dirs {
		p := filepath.Join(dir, "blobs", h.Algorithm, h.Hex)
		if fi, err := os.Stat(p); err == nil {
			return p, fi, nil
		}
	}
	return "", nil, registry.ErrNotFound
}

func (l *layoutBlobs) pushedBlob(h v1.Hash) ([]byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.pushed[h]
	return b, ok
}

func (l *layoutBlobs) Stat(_ context.Context, _ string, h v1.Hash) (int64, error) {
	if b, ok := l.pushedBlob(h); ok {
		return int64(len(b)), nil
	}
	_, fi, err := l.find(h)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (l *layoutBlobs) Get(_ context.Context, _ string, h v1.Hash) (io.ReadCloser, error) {
	if b, ok := l.pushedBlob(h); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	p, _, err := l.find(h)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// Put keeps a pushed blob in memory. Reading fails when the content does not match the digest
// and size the client announced, and then nothing is kept.
func (l *layoutBlobs) Put(_ context.Context, _ string, h v1.Hash, rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pushed == nil {
		l.pushed = map[v1.Hash][]byte{}
	}
	l.pushed[h] = b
	return nil
}
