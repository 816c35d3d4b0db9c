package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// file is one entry of a layer: a regular file, a directory when its name ends in "/", or a
// symbolic link when link is set.
type file struct {
	name string // path in the image, without a leading slash
	mode int64
	uid  int
	data []byte
	link string
}

// layerTar returns an uncompressed tar of files in name order, every parent directory made
// explicit (0755, root), every entry owned by uid (default 0) with the time at. Nothing of the
// machine that builds it (owners, modes, times, order) reaches the tar.
func layerTar(files []file, at time.Time) ([]byte, error) {
	entries := map[string]file{}
	for _, f := range files {
		name := strings.TrimPrefix(f.name, "/")
		if name == "" || strings.Contains(name, "..") {
			return nil, fmt.Errorf("image path %q is not a relative path inside the image", f.name)
		}
		if _, dup := entries[name]; dup {
			return nil, fmt.Errorf("image path %q is given twice", name)
		}
		f.name = name
		entries[name] = f
		for d := path.Dir(strings.TrimSuffix(name, "/")); d != "."; d = path.Dir(d) {
			if _, ok := entries[d+"/"]; !ok {
				entries[d+"/"] = file{name: d + "/", mode: 0o755}
			}
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		f := entries[name]
		hdr := &tar.Header{Name: name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: at, Format: tar.FormatPAX}
		switch {
		case strings.HasSuffix(name, "/"):
			hdr.Typeflag = tar.TypeDir
		case f.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, f.link, 0o777
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzLayer is a gzipped layer held in memory, compressed once: go-containerregistry's own
// layers would compress again each time the blob is read.
type gzLayer struct {
	gz             []byte
	digest, diffID v1.Hash
}

// newLayer gzips an uncompressed tar. The gzip header carries no name and no time, so equal
// tars give equal blobs under one Go toolchain.
func newLayer(tarball []byte) (*gzLayer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarball); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &gzLayer{gz: buf.Bytes(), digest: sha(buf.Bytes()), diffID: sha(tarball)}, nil
}

func sha(b []byte) v1.Hash {
	s := sha256.Sum256(b)
	h, _ := v1.NewHash(fmt.Sprintf("sha256:%x", s))
	return h
}

func (l *gzLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *gzLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *gzLayer) Size() (int64, error)                { return int64(len(l.gz)), nil }
func (l *gzLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
func (l *gzLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.gz)), nil
}
func (l *gzLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.gz))
}
