package artifacts

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func TestSplitAddonRef(t *testing.T) {
	for _, tt := range []struct{ ref, repo, tag string }{
		{"ghcr.io/flannel-io/flannel:v0.27.4", "ghcr.io/flannel-io/flannel", "v0.27.4"},
		{"ghcr.io/flannel-io/flannel-cni-plugin:v1.8.0-flannel1", "ghcr.io/flannel-io/flannel-cni-plugin", "v1.8.0-flannel1"},
		{"localhost:5000/flannel", "localhost:5000/flannel", "latest"},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			if repo, tag := splitAddonRef(tt.ref); repo != tt.repo || tag != tt.tag {
				t.Errorf("splitAddonRef = %q, %q; want %q, %q", repo, tag, tt.repo, tt.tag)
			}
		})
	}
}

// TestAddonImagesRunTheDaemonSet assembles the add-on images from stand-in binaries and a tiny
// rootfs, renders slipway's flannel manifests, and checks that every container of the DaemonSet
// finds its command and the files its arguments name in its image, outside the volumes mounted
// over it. It fails when either the manifests or the image layout move a path.
func TestAddonImagesRunTheDaemonSet(t *testing.T) {
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs.tar")
	root, err := layerTar([]tarFile{
		{name: caBundle, mode: 0o644, data: []byte("ca\n")},
		{name: "usr/bin/cp", mode: 0o755, data: []byte("cp\n")},
		{name: "usr/sbin/iptables", mode: 0o755, data: []byte("iptables\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rootfs, root, 0o644); err != nil {
		t.Fatal(err)
	}
	built := map[string]string{}
	build := func(_ context.Context, what, version string) (string, error) {
		built[what] = version
		p := filepath.Join(dir, what)
		return p, os.WriteFile(p, []byte(what+" "+version), 0o755)
	}
	var specs []imageSpec
	for _, ref := range AddonImages {
		s, err := addonSpec(context.Background(), ref, build)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	_, flannelTag := splitAddonRef(addons.FlannelImage)
	if built["flanneld"] != flannelTag || built["cni-plugin"] != cniPluginsVersion {
		t.Errorf("built %v, want flanneld at the image's tag %s and the CNI plugin from plugins %s", built, flannelTag, cniPluginsVersion)
	}
	out := filepath.Join(dir, "layout")
	b := &builder{}
	if err := b.writeLayout(out, rootfs, specs); err != nil {
		t.Fatal(err)
	}
	images := readLayout(t, out)

	ds := flannelDaemonSet(t)
	containers := append(append([]corev1.Container{}, ds.Spec.Template.Spec.InitContainers...), ds.Spec.Template.Spec.Containers...)
	if len(containers) < 3 {
		t.Fatalf("the flannel DaemonSet has %d containers, want the two init containers and flanneld", len(containers))
	}
	for _, c := range containers {
		t.Run(c.Name, func(t *testing.T) {
			img, ok := images[c.Image]
			if !ok {
				t.Fatalf("image %s is not in the layout (it has %v)", c.Image, keys(images))
			}
			cmd := append(append([]string{}, c.Command...), c.Args...)
			if len(c.Command) == 0 {
				cmd = append(append([]string{}, img.entrypoint...), c.Args...)
			}
			if len(cmd) == 0 {
				t.Fatal("neither the container nor the image names a command")
			}
			if p := img.lookPath(cmd[0]); p == "" {
				t.Errorf("command %q is not an executable in %s (PATH %s)", cmd[0], c.Image, img.path)
			}
			for _, arg := range cmd[1:] {
				if !strings.HasPrefix(arg, "/") || underMount(arg, c.VolumeMounts) {
					continue
				}
				if _, ok := img.files[strings.TrimPrefix(arg, "/")]; !ok {
					t.Errorf("argument %s names no file in %s", arg, c.Image)
				}
			}
		})
	}
}

// imageFS is what a container of an image sees: its flattened files with their modes, and how
// it runs.
type imageFS struct {
	files      map[string]int64
	entrypoint []string
	path       string
}

// lookPath finds a command the way the runtime does: absolute as is, else on the image's PATH.
func (f imageFS) lookPath(cmd string) string {
	if strings.HasPrefix(cmd, "/") {
		if f.files[strings.TrimPrefix(cmd, "/")]&0o111 != 0 {
			return cmd
		}
		return ""
	}
	for _, d := range strings.Split(f.path, ":") {
		if p := path.Join(d, cmd); f.files[strings.TrimPrefix(p, "/")]&0o111 != 0 {
			return p
		}
	}
	return ""
}

func readLayout(t *testing.T, dir string) map[string]imageFS {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]imageFS{}
	for _, desc := range im.Manifests {
		img, err := p.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		fs := imageFS{files: map[string]int64{}, entrypoint: cfg.Config.Entrypoint}
		for _, e := range cfg.Config.Env {
			if v, ok := strings.CutPrefix(e, "PATH="); ok {
				fs.path = v
			}
		}
		tr := tar.NewReader(mutate.Extract(img))
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Typeflag == tar.TypeReg {
				fs.files[strings.TrimPrefix(hdr.Name, "./")] = hdr.Mode
			}
		}
		images[desc.Annotations[RefAnnotation]] = fs
	}
	return images
}

// flannelDaemonSet renders slipway's flannel manifests and returns their DaemonSet.
func flannelDaemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	c := &v1beta1.Cluster{ClusterNetwork: v1beta1.ClusterNetwork{
		PodSubnet: "10.244.0.0/16", CNI: v1beta1.CNI{Flannel: &v1beta1.Flannel{Backend: "vxlan"}},
	}}
	manifest, err := addons.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufioReader(manifest))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			t.Fatal("the flannel manifests have no DaemonSet")
		}
		if err != nil {
			t.Fatal(err)
		}
		var ds appsv1.DaemonSet
		if err := yaml.Unmarshal(doc, &ds); err != nil {
			t.Fatal(err)
		}
		if ds.Kind == "DaemonSet" {
			return &ds
		}
	}
}

func underMount(p string, mounts []corev1.VolumeMount) bool {
	for _, m := range mounts {
		if p == m.MountPath || strings.HasPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return true
		}
	}
	return false
}

func keys(m map[string]imageFS) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
