package artifacts

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// imagesFormat changes whenever the way images are assembled changes, so old layouts are not reused.
const imagesFormat = "images-v2"

// RefAnnotation names an image in a layout by its full upstream reference, the way containerd's
// importer reads it.
const RefAnnotation = "io.containerd.image.name"

// caBundle is where the node rootfs keeps the CA bundle that images reuse.
const caBundle = "etc/ssl/certs/ca-certificates.crt"

// images writes the release's control-plane images into an OCI layout keyed by its inputs.
// Images are FROM scratch with a passwd file and CA bundle, except kube-proxy, which needs
// iptables and sits on the node's Debian rootfs. Layers are stored uncompressed: they only travel
// over the sandbox bridge, and skipping gzip saves minutes of CPU on 2 cores.
func (b *builder) images(ctx context.Context, r *Release) error {
	rootfs, err := b.rootfs(ctx)
	if err != nil {
		return err
	}
	specs := make([]imageSpec, 0, len(r.Images))
	for _, ref := range r.Images {
		s, err := b.imageSpec(ctx, r, ref)
		if err != nil {
			return err
		}
		specs = append(specs, s)
	}
	inputs := []string{imagesFormat, rootfs}
	for _, s := range specs {
		inputs = append(inputs, s.ref, s.binary)
		inputs = append(inputs, s.extras...)
	}
	key, err := keyOf(inputs...)
	if err != nil {
		return err
	}
	r.Layout = b.path("images", r.Version+"-"+key)
	return b.once(r.Layout, func(tmp string) error { return b.writeLayout(tmp, rootfs, specs) })
}

// imageSpec is one image: its upstream reference, its binary and where that goes.
type imageSpec struct {
	ref        string
	binary     string // host path
	target     string // path in the image
	entrypoint []string
	debian     bool // on the Debian rootfs instead of scratch
	// extras are more binaries (host paths) that go beside binary, as upstream's image has them.
	extras []string
}

func (b *builder) imageSpec(ctx context.Context, r *Release, ref string) (imageSpec, error) {
	name, tag := splitRef(ref)
	s := imageSpec{ref: ref}
	switch name {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd":
		s.binary = filepath.Join(r.Bin, name)
		s.target = "usr/local/bin/" + name
		s.debian = name == "kube-proxy"
		if name == "etcd" {
			// registry.k8s.io/etcd ships etcdutl and etcdctl too: a restore runs etcdutl from
			// this image, and the scheduled snapshots etcdctl.
			s.extras = []string{filepath.Join(r.Bin, "etcdutl"), filepath.Join(r.Bin, "etcdctl")}
		}
	case "coredns/coredns":
		p, err := b.coreDNSBinary(ctx, tag)
		if err != nil {
			return s, err
		}
		s.binary, s.target = p, "coredns"
	case "pause":
		s.binary, s.target = b.pause, "pause"
	default:
		return s, fmt.Errorf("kubeadm %s wants image %s, which the sandbox cannot build", r.Version, ref)
	}
	// kubeadm's manifests name the command; the entrypoint matters for CoreDNS and pause.
	s.entrypoint = []string{"/" + s.target}
	return s, nil
}

func (b *builder) writeLayout(dir, rootfs string, specs []imageSpec) error {
	keep := map[string][]byte{caBundle: nil}
	debian, err := filterTar(rootfs, debianDrop, keep)
	if err != nil {
		return err
	}
	base, err := layerTar(scratchFiles(keep[caBundle]))
	if err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, s := range specs {
		files := []tarFile{{name: s.target, mode: 0o755, src: s.binary}}
		for _, x := range s.extras {
			files = append(files, tarFile{name: path.Join(path.Dir(s.target), filepath.Base(x)), mode: 0o755, src: x})
		}
		bin, err := layerTar(files)
		if err != nil {
			return err
		}
		under := base
		if s.debian {
			under = debian
		}
		img, err := image(s.entrypoint, under, bin)
		if err != nil {
			return fmt.Errorf("assembling %s: %w", s.ref, err)
		}
		_, tag := splitRef(s.ref)
		ann := map[string]string{RefAnnotation: s.ref, "org.opencontainers.image.ref.name": tag}
		if err := p.AppendImage(img, layout.WithAnnotations(ann)); err != nil {
			return fmt.Errorf("writing %s to %s: %w", s.ref, dir, err)
		}
	}
	return nil
}

// image assembles an OCI image from uncompressed layer tarballs.
func image(entrypoint []string, layers ...[]byte) (v1.Image, error) {
	cfg := &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: time.Unix(0, 0).UTC()},
		Config: v1.Config{
			Entrypoint: entrypoint,
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		if img, err = mutate.AppendLayers(img, static.NewLayer(l, types.OCIUncompressedLayer)); err != nil {
			return nil, err
		}
	}
	return img, nil
}

// debianDrop lists rootfs paths that kube-proxy's image does not need: documentation, the
// container runtime, init and services. What stays is a shell, iptables and their libraries.
var debianDrop = []string{
	"usr/share/doc/", "usr/share/man/", "usr/share/locale/", "usr/share/info/", "usr/share/zoneinfo/",
	"usr/bin/containerd", "usr/bin/ctr", "usr/sbin/runc", "usr/lib/cni/", "usr/sbin/haproxy",
	"usr/lib/systemd/", "usr/bin/systemd", "var/cache/", "var/lib/apt/", "var/log/",
	"usr/lib/x86_64-linux-gnu/systemd/", "usr/lib/x86_64-linux-gnu/gconv/",
}

// scratchFiles are what distroless-like images need around a static binary: users for
// runAsUser lookups, host resolution order and the CA bundle.
func scratchFiles(ca []byte) []tarFile {
	return []tarFile{
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: caBundle, mode: 0o644, data: append([]byte{}, ca...)},
		{name: "tmp/", mode: 0o1777},
	}
}

// once builds dir with fn unless it already exists: fn writes a temporary sibling that is renamed
// into place, so an interrupted build never leaves a half-written output behind.
func (b *builder) once(dir string, fn func(tmp string) error) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := fn(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) && !strings.Contains(err.Error(), "not empty") {
		return err
	}
	return nil
}
