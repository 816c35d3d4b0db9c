package images

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Refs returns the references of the images in an archive that WriteArchive wrote (or any OCI
// layout tar whose index names its images with RefAnnotation), in index order.
func Refs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no index.json: not an OCI image archive (make image writes one)", path)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if hdr.Name != "index.json" && hdr.Name != "./index.json" {
			continue
		}
		var idx v1.IndexManifest
		if err := json.NewDecoder(io.LimitReader(tr, 4<<20)).Decode(&idx); err != nil {
			return nil, fmt.Errorf("%s: index.json: %w", path, err)
		}
		var refs []string
		for _, m := range idx.Manifests {
			if ref := m.Annotations[RefAnnotation]; ref != "" {
				refs = append(refs, ref)
			}
		}
		if len(refs) == 0 {
			return nil, fmt.Errorf("%s: index.json names no image (annotation %s)", path, RefAnnotation)
		}
		return refs, nil
	}
}
