package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/slipway-dev/slipway/pkg/images"
)

// The images the full conformance run needs beyond the subset's, each made of what upstream's is
// made of, from the release's sources and Debian packages (test/conformance/README.md):
//
//   - nginx (both tags the suite names): Debian's nginx-light on the userland, serving
//     /usr/share/nginx/html on port 80 in the foreground, as upstream's nginx image does;
//   - nautilus and kitten (the kubectl "Update Demo"): agnhost's test-webserver serving the
//     release's data.json and picture from /, as upstream's are agnhost plus those files;
//   - nonroot: the userland running as user 1234, as upstream's is debian-base with USER 1234;
//   - nonewprivs: the release's nnp program, setuid root, on the busybox image (upstream's is
//     Alpine plus nnp): it prints the effective uid, which a spec compares with and without
//     allowPrivilegeEscalation;
//   - sample-apiserver, for the aggregator spec (sampleapiserver.go). The etcd image that spec
//     runs beside it is not built here: it is kubeadm's, which the sandbox serves already.
//
// A release whose suite names none of an image leaves it out.

const nginxConf = `# slipway test/conformance: the suite's nginx image, Debian's nginx-light in the foreground.
user www-data;
worker_processes 1;
pid /run/nginx.pid;
error_log /dev/stderr notice;
events { worker_connections 512; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    server {
        listen 80 default_server;
        listen [::]:80 default_server;
        root /usr/share/nginx/html;
        index index.html;
    }
}
`

const nginxIndex = `<!DOCTYPE html>
<html><head><title>Welcome to nginx!</title></head>
<body><h1>Welcome to nginx!</h1></body></html>
`

// fileLayer is an uncompressed layer of regular files (name without a leading slash, mode,
// content), each owned by root, with the time at; parent directories are implied.
func fileLayer(at time.Time, files ...tarEntry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, ModTime: at, Format: tar.FormatPAX}
		if strings.HasSuffix(f.name, "/") {
			hdr.Typeflag = tar.TypeDir
		} else {
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
	return static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer), nil
}

type tarEntry struct {
	name string
	mode int64
	data []byte
}

const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// nginx is the suite's nginx image under refs.
func nginx(u *userland, refs []string, at time.Time) (images.Built, error) {
	l, err := fileLayer(at,
		tarEntry{"etc/nginx/nginx.conf", 0o644, []byte(nginxConf)},
		tarEntry{"usr/share/nginx/html/", 0o755, nil},
		tarEntry{"usr/share/nginx/html/index.html", 0o644, []byte(nginxIndex)},
	)
	if err != nil {
		return images.Built{}, err
	}
	img, err := stack(v1.Config{
		Cmd: []string{"nginx", "-g", "daemon off;"}, Env: []string{pathEnv}, WorkingDir: "/", User: "0:0",
		ExposedPorts: map[string]struct{}{"80/tcp": {}},
		Labels:       map[string]string{"org.opencontainers.image.description": "Debian's nginx-light, built by slipway's test/conformance/image"},
	}, at, u.layer, l)
	return images.Built{Refs: refs, Image: img}, err
}

// demoImage is nautilus or kitten under refs: agnhost (already on the userland) with the
// release's test/images/<name>/html files in /, running test-webserver there.
func demoImage(agnhost v1.Image, src, name string, refs []string, at time.Time) (images.Built, error) {
	dir := filepath.Join(src, "test/images", name, "html")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return images.Built{}, fmt.Errorf("the %s image's files: %w", name, err)
	}
	var files []tarEntry
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return images.Built{}, err
		}
		files = append(files, tarEntry{e.Name(), 0o644, data})
	}
	l, err := fileLayer(at, files...)
	if err != nil {
		return images.Built{}, err
	}
	cfg, err := agnhost.ConfigFile()
	if err != nil {
		return images.Built{}, err
	}
	layers, err := agnhost.Layers()
	if err != nil {
		return images.Built{}, err
	}
	c := cfg.Config
	c.Cmd = []string{"test-webserver"}
	img, err := stack(c, at, append(layers, l)...)
	return images.Built{Refs: refs, Image: img}, err
}

// nonroot is the suite's nonroot image under refs: the userland, user 1234.
func nonroot(u *userland, refs []string, at time.Time) (images.Built, error) {
	img, err := stack(v1.Config{Cmd: []string{"/bin/sh"}, Env: []string{pathEnv}, WorkingDir: "/", User: "1234"}, at, u.layer)
	return images.Built{Refs: refs, Image: img}, err
}

// nonewprivs is the suite's nonewprivs image under refs: the busybox image plus nnp, setuid root.
func nonewprivs(busybox v1.Image, nnp string, refs []string, at time.Time) (images.Built, error) {
	data, err := os.ReadFile(nnp)
	if err != nil {
		return images.Built{}, fmt.Errorf("nnp (test/conformance/build.sh builds it): %w", err)
	}
	l, err := fileLayer(at, tarEntry{"usr/local/bin/nnp", 0o4755, data})
	if err != nil {
		return images.Built{}, err
	}
	cfg, err := busybox.ConfigFile()
	if err != nil {
		return images.Built{}, err
	}
	layers, err := busybox.Layers()
	if err != nil {
		return images.Built{}, err
	}
	c := cfg.Config
	c.Cmd = []string{"nnp"}
	img, err := stack(c, at, append(layers, l)...)
	return images.Built{Refs: refs, Image: img}, err
}

// optional returns the references among listed of the image called name under registry; none
// when the suite names none.
func optional(listed []string, registry, name string) []string {
	refs, err := named(listed, registry, name)
	if err != nil {
		return nil
	}
	return refs
}
