package addons_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/test/golden"
)

// clusters are the fixtures in testdata/clusters, each rendered to testdata/<name>.golden.
var clusters = []string{"flannel", "flannel-hostgw-overwrite", "canal", "cilium", "cilium-kpr"}

func load(t *testing.T, name string) *v1beta1.Cluster {
	t.Helper()
	res, err := config.Load(context.Background(), config.Options{ManifestPath: filepath.Join("testdata", "clusters", name+".yaml")})
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	return res.Cluster
}

func render(t *testing.T, name string) []byte {
	t.Helper()
	out, err := addons.Render(load(t, name))
	if err != nil {
		t.Fatalf("Render(%s): %v", name, err)
	}
	return out
}

// decode splits a manifest into objects the way apimachinery does, failing on anything that is
// not a Kubernetes object.
func decode(t *testing.T, manifest []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufioReader(manifest))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		json, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			t.Fatalf("document is not strict YAML: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(json); err != nil {
			t.Fatalf("document is not a Kubernetes object: %v\n%s", err, doc)
		}
		if u.GetName() == "" {
			t.Fatalf("%s without a name:\n%s", u.GetKind(), doc)
		}
		objs = append(objs, u)
	}
}

func TestGolden(t *testing.T) {
	for _, name := range clusters {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", name+".golden"), render(t, name))
		})
	}
}

// TestObjects decodes every rendered manifest into Kubernetes objects and checks what the
// cluster depends on: unique objects, the pod subnet and every image from Images.
func TestObjects(t *testing.T) {
	for _, name := range clusters {
		t.Run(name, func(t *testing.T) {
			c := load(t, name)
			manifest := render(t, name)
			objs := decode(t, manifest)
			seen := map[string]bool{}
			for _, o := range objs {
				key := o.GroupVersionKind().GroupKind().String() + "/" + o.GetNamespace() + "/" + o.GetName()
				if seen[key] {
					t.Errorf("%s appears twice", key)
				}
				seen[key] = true
			}
			images, err := addons.Images(c)
			if err != nil {
				t.Fatal(err)
			}
			used := podImages(t, objs)
			for _, img := range images {
				if !used[img] {
					t.Errorf("Images() lists %s, which no pod uses (pods use %v)", img, used)
				}
			}
			for img := range used {
				if !strings.Contains(strings.Join(images, " "), img) {
					t.Errorf("a pod uses %s, which Images() does not list", img)
				}
			}
			if !bytes.Contains(manifest, []byte(c.ClusterNetwork.PodSubnet)) {
				t.Errorf("the manifest does not mention the pod subnet %s", c.ClusterNetwork.PodSubnet)
			}
		})
	}
}

// podImages collects the images of every container and init container of the workloads.
func podImages(t *testing.T, objs []*unstructured.Unstructured) map[string]bool {
	used := map[string]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apps", Kind: "DaemonSet"}) &&
			o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apps", Kind: "Deployment"}) {
			continue
		}
		for _, field := range []string{"containers", "initContainers"} {
			list, _, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list {
				img, _ := c.(map[string]any)["image"].(string)
				used[img] = true
			}
		}
	}
	return used
}

func TestImagesOverwrite(t *testing.T) {
	c := load(t, "flannel-hostgw-overwrite")
	got, err := addons.Images(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "registry.example.com:5000/mirror/flannel-io/flannel:v0.27.4 registry.example.com:5000/mirror/flannel-io/flannel-cni-plugin:v1.8.0-flannel1"
	if strings.Join(got, " ") != want {
		t.Errorf("Images() = %v, want %s", got, want)
	}
	if out, err := addons.Render(load(t, "external")); err != nil || out != nil {
		t.Errorf("external CNI: Render = %q, %v; want nothing", out, err)
	}
	if imgs, _ := addons.Images(load(t, "external")); len(imgs) != 0 {
		t.Errorf("external CNI: Images = %v", imgs)
	}
}
