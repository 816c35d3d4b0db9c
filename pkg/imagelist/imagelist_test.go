package imagelist_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/test/golden"
)

// load loads testdata/<name>.yaml as apply does, with the machine-controller image tag v1.2.3.
func load(t *testing.T, name string) *v1beta1.Cluster {
	t.Helper()
	return loadFile(t, filepath.Join("testdata", name+".yaml"), "")
}

// loadFile loads a manifest and, unless tf is "", a Terraform output.
func loadFile(t *testing.T, manifest, tf string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: manifest, TerraformSource: tf, ImageTag: "v1.2.3"})
	if err != nil {
		t.Fatalf("loading %s: %v", manifest, err)
	}
	return res.Cluster
}

// named is a loaded manifest and its name.
type named struct {
	name string
	c    *v1beta1.Cluster
}

// clusters are the manifests of testdata/ and of examples/ (examples/openstack.yaml with its
// Terraform output), loaded.
func clusters(t *testing.T) []named {
	t.Helper()
	var out []named
	for _, name := range cases(t) {
		out = append(out, named{name, load(t, name)})
	}
	examples, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no manifests in examples/: %v", err)
	}
	for _, f := range examples {
		tf := ""
		if filepath.Base(f) == "openstack.yaml" {
			tf = "../../examples/openstack-tf-output.json"
		}
		out = append(out, named{"examples/" + filepath.Base(f), loadFile(t, f, tf)})
	}
	return out
}

// cases are the manifests of testdata/, by name.
func cases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in testdata: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return names
}

// TestGolden pins the list of every manifest of testdata/ in testdata/<name>.golden, as
// `config images -o json` prints it.
func TestGolden(t *testing.T) {
	for _, name := range cases(t) {
		t.Run(name, func(t *testing.T) {
			imgs, err := imagelist.For(load(t, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(imgs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden.Check(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}

// TestList checks what the list must say whatever the golden files hold: sorted, each image
// once, every reference under overwriteRegistry when it is set, and the components the manifest
// asks for present or absent.
func TestList(t *testing.T) {
	tests := []struct {
		name          string
		want, absent  []string // components
		wantRefs      []string
		registryOwned bool
	}{
		{name: "default", want: []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd", "coredns", "pause", "flannel"},
			absent: []string{imagelist.MachineController, imagelist.CCM}},
		{name: "overwrite-canal", want: []string{"canal", "kube-proxy"}, registryOwned: true,
			wantRefs: []string{"registry.example.com:5000/mirror/coredns:v1.14.2", "registry.example.com:5000/mirror/calico/node:v3.30.3"}},
		{name: "cilium", want: []string{"cilium", "kube-proxy"}, absent: []string{"flannel", "canal"}},
		{name: "cilium-kpr", want: []string{"cilium"}, absent: []string{"kube-proxy", "flannel"}},
		{name: "external-cni", want: []string{"pause"}, absent: []string{"flannel", "canal", "cilium", "external"}},
		{name: "openstack-external", want: []string{imagelist.MachineController, imagelist.CCM},
			wantRefs: []string{"ghcr.io/slipway-dev/machine-controller:v1.2.3", "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"}},
		{name: "openstack-external-overwrite", want: []string{imagelist.MachineController, imagelist.CCM}, registryOwned: true,
			wantRefs: []string{"registry.example.com:5000/slipway-dev/machine-controller:v1.2.3", "registry.example.com:5000/provider-os/openstack-cloud-controller-manager:v1.34.1"}},
		{name: "openstack-no-machine-controller", want: []string{imagelist.CCM}, absent: []string{imagelist.MachineController}},
		// An image the manifest names is used as written, not rewritten.
		{name: "machine-controller-image", want: []string{imagelist.MachineController}, wantRefs: []string{"quay.example.com/team/machine-controller:v9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, tt.name)
			imgs, err := imagelist.For(c)
			if err != nil {
				t.Fatal(err)
			}
			refs := imagelist.Refs(imgs)
			if !slices.IsSorted(refs) || len(slices.Compact(slices.Clone(refs))) != len(refs) {
				t.Errorf("not sorted, or not each once: %v", refs)
			}
			components := map[string]bool{}
			for _, img := range imgs {
				for _, c := range img.Components {
					components[c] = true
				}
			}
			for _, c := range tt.want {
				if !components[c] {
					t.Errorf("no image of %s in %v", c, imgs)
				}
			}
			for _, c := range tt.absent {
				if components[c] {
					t.Errorf("an image of %s in %v", c, imgs)
				}
			}
			for _, r := range tt.wantRefs {
				if !slices.Contains(refs, r) {
					t.Errorf("%s missing from %v", r, refs)
				}
			}
			if tt.registryOwned {
				for _, r := range refs {
					if !strings.HasPrefix(r, c.RegistryConfiguration.OverwriteRegistry+"/") {
						t.Errorf("%s is not under overwriteRegistry %s", r, c.RegistryConfiguration.OverwriteRegistry)
					}
				}
			}
		})
	}
}

// TestSharedImage: an image two components run is listed once, naming both.
func TestSharedImage(t *testing.T) {
	c := load(t, "openstack-external")
	c.MachineController.Image = "registry.k8s.io/pause:3.10.2"
	imgs, err := imagelist.For(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range imgs {
		if img.Ref == c.MachineController.Image {
			if !slices.Equal(img.Components, []string{imagelist.MachineController, "pause"}) {
				t.Errorf("components of %s = %v", img.Ref, img.Components)
			}
			return
		}
	}
	t.Errorf("%s not listed: %v", c.MachineController.Image, imgs)
}

// TestBadVersion: a version kubeadm's images are not known for is an error, not a short list.
func TestBadVersion(t *testing.T) {
	c := load(t, "default")
	c.Versions.Kubernetes = "v1.20.0"
	if _, err := imagelist.For(c); err == nil || !strings.Contains(err.Error(), "v1.20") {
		t.Errorf("For() error = %v, want one naming v1.20", err)
	}
}
