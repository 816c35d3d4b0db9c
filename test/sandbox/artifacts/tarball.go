package artifacts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// tarFile is one regular file to put into an image layer.
type tarFile struct {
	name string // path inside the image, without a leading slash; a trailing slash makes a directory
	mode int64
	data []byte
	src  string // read from this host file when data is nil
}

// layerTar returns an uncompressed tar of files. Directories are implied by the paths; times are
// fixed so that equal inputs give equal digests.
func layerTar(files []tarFile) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	seen := map[string]bool{}
	for _, f := range files {
		dirs := strings.Split(strings.TrimSuffix(f.name, "/"), "/")
		for i := 1; i < len(dirs); i++ {
			d := strings.Join(dirs[:i], "/") + "/"
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
				return nil, err
			}
		}
		if strings.HasSuffix(f.name, "/") {
			seen[f.name] = true
			if err := tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: tar.TypeDir, Mode: f.mode, ModTime: epoch}); err != nil {
				return nil, err
			}
			continue
		}
		data := f.data
		if data == nil {
			var err error
			if data, err = os.ReadFile(f.src); err != nil {
				return nil, fmt.Errorf("reading %s for the image: %w", f.src, err)
			}
		}
		hdr := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: f.mode, Size: int64(len(data)), ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// filterTar copies the tar at src without the entries whose names start with one of drop, and
// returns the copy. It also returns the content of the entries named in keep, for reuse.
func filterTar(src string, drop []string, keep map[string][]byte) ([]byte, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
next:
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", src, err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		for _, d := range drop {
			if strings.HasPrefix(name, d) {
				continue next
			}
		}
		hdr.Name = name
		if hdr.Name == "" {
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		var w io.Writer = tw
		var kept bytes.Buffer
		if _, ok := keep[name]; ok {
			w = io.MultiWriter(tw, &kept)
		}
		if _, err := io.Copy(w, tr); err != nil {
			return nil, fmt.Errorf("copying %s from %s: %w", name, src, err)
		}
		if _, ok := keep[name]; ok {
			keep[name] = kept.Bytes()
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeTarGz writes a gzipped tar of files at path, with fixed times so that equal files give an
// equal digest.
func writeTarGz(path string, files []tarFile) error {
	data, err := layerTar(files)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
