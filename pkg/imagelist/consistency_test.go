package imagelist_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/test/kubebin"
)

// creds are OpenStack credentials for rendering the cloud-controller-manager's Secret.
var creds = map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin", "OS_PASSWORD": "secret",
	"OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo", "OS_PROJECT_DOMAIN_NAME": "Default", "OS_REGION_NAME": "RegionOne"}

// rendered renders the manifests apply applies for c (the CNI's, the machine-controller's
// and the cloud-controller-manager's) and returns every image they reference, with where.
func rendered(t *testing.T, c *v1beta1.Cluster) map[string]string {
	t.Helper()
	out := map[string]string{}
	cni, err := addons.Render(c)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Decode(cni)
	if err != nil {
		t.Fatal(err)
	}
	if c.MachineController.Deploy != nil && *c.MachineController.Deploy {
		mc, err := mcdeploy.Render(c, []byte("CA"))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, mc...)
	}
	if ccmdeploy.Wanted(c) {
		ccm, err := ccmdeploy.Render(c, creds)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, ccm...)
	}
	for _, o := range objs {
		collect(o.Object, o.GetKind()+"/"+o.GetName(), out)
	}
	return out
}

// collect records every "image" string anywhere in v: containers, init containers and any
// other place an image could hide.
func collect(v any, where string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "image" {
				out[s] = where
				continue
			}
			collect(e, where, out)
		}
	case []any:
		for _, e := range v {
			collect(e, where, out)
		}
	}
}

// TestListMatchesRenderedManifests is the single-source check: every image the rendered add-on,
// machine-controller and cloud-controller-manager manifests reference is in the list, and
// every image of the list is referenced by a rendered manifest or is kubeadm's.
func TestListMatchesRenderedManifests(t *testing.T) {
	for _, m := range clusters(t) {
		t.Run(m.name, func(t *testing.T) {
			c := m.c
			imgs, err := imagelist.For(c)
			if err != nil {
				t.Fatal(err)
			}
			listed := imagelist.Refs(imgs)
			inManifests := rendered(t, c)
			for ref, where := range inManifests {
				if !slices.Contains(listed, ref) {
					t.Errorf("%s in the rendered %s is not listed: %v", ref, where, listed)
				}
			}
			cp, err := kubeadm.Images(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, ref := range listed {
				if _, ok := inManifests[ref]; !ok && !slices.Contains(cp, ref) {
					t.Errorf("%s is listed but no rendered manifest nor kubeadm uses it (manifests: %v)", ref, slices.Sorted(maps.Keys(inManifests)))
				}
			}
		})
	}
}

// TestKubeadmImagesMatchKubeadm asks a real kubeadm which images the rendered InitConfiguration
// makes it pull (`kubeadm config images list --config`), which must be exactly the list's
// control-plane images: the image repository, version, kube-proxy's absence under Cilium's
// replacement and the etcd, CoreDNS and pause tags all come from kubeadm itself.
func TestKubeadmImagesMatchKubeadm(t *testing.T) {
	bin := kubebin.Kubeadm(t, "v1.36.3")
	for _, m := range clusters(t) {
		t.Run(m.name, func(t *testing.T) {
			c := m.c
			if c.Versions.Kubernetes != "v1.36.3" {
				// kubeadm lists the images of its own version: check the rest of this manifest
				// (registry, CNI, kube-proxy) at kubeadm's version, which the list then follows too.
				cc := *c
				cc.Versions.Kubernetes = "v1.36.3"
				c = &cc
			}
			cfg, err := kubeadm.InitConfig(c, kubeadm.NodeParams{Host: c.ControlPlane.Hosts[0], Name: "cp-1"}, kubeadm.KubeletParams{},
				kubeadm.InitSecrets{Token: "abcdef.0123456789abcdef"})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "kubeadm.yaml")
			if err := os.WriteFile(path, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "config", "images", "list", "--config", path).Output()
			if err != nil {
				t.Fatalf("kubeadm config images list: %v\n%s", err, cfg)
			}
			want := strings.Fields(string(out))
			slices.Sort(want)
			imgs, err := imagelist.For(c)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, img := range imgs {
				// The add-ons, the machine-controller and the CCM are not kubeadm's.
				if !slices.ContainsFunc(img.Components, func(s string) bool {
					return s == addons.CNI(c) || s == imagelist.MachineController || s == imagelist.CCM
				}) {
					got = append(got, img.Ref)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("control-plane images %v, kubeadm pulls %v", got, want)
			}
		})
	}
}
