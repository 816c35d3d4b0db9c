package images

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// RefAnnotation names an image of a layout's index by its full reference, the annotation that
// containerd's importer and the sandbox registry read.
const RefAnnotation = "io.containerd.image.name"

// WriteLayout writes the images into an OCI image layout at dir (created, or added to), one index
// entry per reference.
func WriteLayout(dir string, built []Built) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("creating image layout %s: %w", dir, err)
		}
	}
	for _, b := range built {
		for _, ref := range b.Refs {
			ann := map[string]string{RefAnnotation: ref, "org.opencontainers.image.ref.name": ref[strings.LastIndex(ref, ":")+1:]}
			err := p.AppendImage(b.Image, layout.WithAnnotations(ann), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}))
			if err != nil {
				return fmt.Errorf("writing %s to %s: %w", ref, dir, err)
			}
		}
	}
	return nil
}

// dockerManifest is one entry of the manifest.json that `docker save` writes and `docker load`
// reads.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// WriteArchive writes the images into one tar at path that is an OCI layout (index.json with
// RefAnnotation, which `ctr images import` reads) and a `docker save` archive (manifest.json, which
// `docker load` reads) over the same blobs. Its bytes depend only on the images: entries sorted,
// owned by root, with fixed modes and the time at.
func WriteArchive(path string, built []Built, at time.Time) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".archive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := WriteLayout(dir, built); err != nil {
		return err
	}
	var docker []dockerManifest
	for _, b := range built {
		m, err := b.Image.Manifest()
		if err != nil {
			return err
		}
		d := dockerManifest{Config: blobPath(m.Config.Digest), RepoTags: b.Refs}
		for _, l := range m.Layers {
			d.Layers = append(d.Layers, blobPath(l.Digest))
		}
		docker = append(docker, d)
	}
	data, err := json.Marshal(docker)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := tarDir(tmp, dir, at); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// tarDir writes the tree under dir as a tar at path, entries in name order with fixed metadata.
func tarDir(path, dir string, at time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, name := range names {
		if err := tarEntry(tw, dir, name, at); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func tarEntry(tw *tar.Writer, dir, name string, at time.Time) error {
	hdr := &tar.Header{Name: name, ModTime: at, Format: tar.FormatPAX}
	if strings.HasSuffix(name, "/") {
		hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		return tw.WriteHeader(hdr)
	}
	src, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, src)
	return err
}
