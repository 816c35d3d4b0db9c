package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/slipway-dev/slipway/pkg/images"
)

// userland is the Debian root filesystem that test/conformance/userland/build.sh makes (minbase
// plus dig, curl, nc, ip and busybox-static), read once: as one image layer, and busybox taken
// out of it.
type userland struct {
	layer   v1.Layer
	busybox []byte
	// bash is Debian's bash-static: the busybox image's sh (see busybox).
	bash []byte
}

// readUserland reads the rootfs tarball at path. Device nodes, FIFOs and whatever sits under
// dev/, proc/ and sys/ are left out: a container's runtime provides those, and unpacking a device
// node fails where the host (a sandbox container) may not create one. The layer is stored
// uncompressed, as the sandbox's own images are: it travels only over the sandbox bridge.
func readUserland(path string) (*userland, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the conformance userland: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	u := &userland{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(hdr.Name, "./"), "/")
		if name == "" || skipped(name, hdr.Typeflag) {
			continue
		}
		hdr.Name = name
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		var w io.Writer = tw
		var kept bytes.Buffer
		// Debian bookworm merges /bin into /usr/bin: /bin/busybox and /bin/bash-static are stored there.
		keep := map[string]*[]byte{"usr/bin/busybox": &u.busybox, "bin/busybox": &u.busybox, "usr/bin/bash-static": &u.bash, "bin/bash-static": &u.bash}[name]
		if keep != nil {
			w = io.MultiWriter(tw, &kept)
		}
		if _, err := io.Copy(w, tr); err != nil {
			return nil, fmt.Errorf("copying %s from %s: %w", name, path, err)
		}
		if keep != nil {
			*keep = kept.Bytes()
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if u.busybox == nil || u.bash == nil {
		return nil, fmt.Errorf("%s lacks busybox or bash-static (test/conformance/userland/packages.txt names busybox-static and bash-static)", path)
	}
	u.layer = static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer)
	return u, nil
}

func skipped(name string, typ byte) bool {
	switch typ {
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return true
	}
	for _, dir := range []string{"dev/", "proc/", "sys/"} {
		if strings.HasPrefix(name, dir) && name != dir {
			return true
		}
	}
	return false
}

// onUserland returns img with the userland as its bottom layer: its own layers (pkg/images' base
// files and the program) sit on top, so its passwd, group and CA bundle replace Debian's.
func onUserland(img v1.Image, u *userland, created time.Time) (v1.Image, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	return stack(cfg.Config, created, append([]v1.Layer{u.layer}, layers...)...)
}

// stack is an OCI image of layers, bottom first, with config.
func stack(config v1.Config, created time.Time, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: created},
		Config:       config,
	})
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "slipway test/conformance/image"}})
		if err != nil {
			return nil, err
		}
	}
	return img, nil
}

// glibcDNSTesting is the suite's glibc-dns-testing image under refs: upstream's is Debian
// bookworm with dnsutils, which the userland is. The DNS tests run their probes in it with
// /bin/sh (dig, getent, seq, test).
func glibcDNSTesting(u *userland, refs []string, created time.Time) (images.Built, error) {
	img, err := stack(v1.Config{
		Cmd:        []string{"/bin/sh"},
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		WorkingDir: "/",
		User:       "0:0",
		Labels:     map[string]string{"org.opencontainers.image.description": "Debian bookworm minbase with dnsutils, built by slipway's test/conformance/image"},
	}, created, u.layer)
	return images.Built{Refs: refs, Image: img}, err
}

// busybox is the suite's busybox image under refs: Debian's static busybox at /bin/busybox with
// a link in /bin for every applet it lists (env, cat, sleep, sysctl, wget, ...), on pkg/images' base
// files, running as root with sh as its command, as upstream's does. sh is Debian's static bash
// rather than busybox's ash: Debian's ash drops environment variables whose names are not shell
// identifiers before it runs a command, so `sh -c env` would not show what a pod's envFrom set
// ("data-1"), which the environment specs check and upstream's busybox passes on.
func busybox(ctx context.Context, u *userland, refs []string, tmp string) (images.Spec, error) {
	bin := filepath.Join(tmp, "busybox")
	if err := os.WriteFile(bin, u.busybox, 0o755); err != nil {
		return images.Spec{}, err
	}
	out, err := exec.CommandContext(ctx, bin, "--list-full").Output()
	if err != nil {
		return images.Spec{}, fmt.Errorf("busybox --list-full: %w", err)
	}
	files := []images.File{{Name: "bin/bash-static", Mode: 0o755, Data: u.bash}, {Name: "bin/sh", Link: "/bin/bash-static"}}
	seen := map[string]bool{"bin/busybox": true, "bin/bash-static": true}
	// Every applet in /bin, as upstream's image has them (a spec runs /bin/sysctl, which Debian
	// lists as sbin/sysctl).
	for _, applet := range strings.Fields(string(out)) {
		name := "bin/" + path.Base(applet)
		if seen[name] || name == "bin/sh" || name == "bin/." || name == "bin/.." || name == "bin/" {
			continue
		}
		seen[name] = true
		files = append(files, images.File{Name: name, Link: "/bin/busybox"})
	}
	if !seen["bin/env"] {
		return images.Spec{}, fmt.Errorf("busybox --list-full names no env: %q", out)
	}
	slices.SortFunc(files, func(a, b images.File) int { return strings.Compare(a.Name, b.Name) })
	return images.Spec{
		Refs:   refs,
		Binary: bin,
		Path:   "bin/busybox",
		Cmd:    []string{"sh"},
		User:   "0:0",
		Files:  files,
		Labels: map[string]string{"org.opencontainers.image.description": "Debian's busybox-static, built by slipway's test/conformance/image"},
	}, nil
}
