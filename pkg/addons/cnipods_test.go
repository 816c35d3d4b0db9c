package addons_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// TestCNIPodsMatchTheManifests renders each CNI and checks that CNIPods selects the pods of its
// DaemonSet, in its namespace, and nothing else of the manifest.
func TestCNIPodsMatchTheManifests(t *testing.T) {
	for _, name := range []string{"flannel", "canal", "cilium", "cilium-kpr"} {
		t.Run(name, func(t *testing.T) {
			c := load(t, name)
			ns, sel, ok := addons.CNIPods(c)
			if !ok {
				t.Fatal("no pods named")
			}
			selector, err := labels.Parse(sel)
			if err != nil {
				t.Fatal(err)
			}
			data, err := addons.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := kube.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			selected := 0
			for _, o := range objs {
				if o.GetKind() != "DaemonSet" && o.GetKind() != "Deployment" {
					continue
				}
				tmpl, _, _ := unstructuredLabels(o.Object)
				if selector.Matches(labels.Set(tmpl)) {
					selected++
					if o.GetKind() != "DaemonSet" || o.GetNamespace() != ns {
						t.Errorf("%s selects %s %s/%s, want the per-node DaemonSet in %s", sel, o.GetKind(), o.GetNamespace(), o.GetName(), ns)
					}
				}
			}
			if selected != 1 {
				t.Errorf("%s in %s selects the pods of %d workloads, want the one DaemonSet", sel, ns, selected)
			}
		})
	}
	if _, _, ok := addons.CNIPods(load(t, "external")); ok {
		t.Error("an external CNI has pods slipway knows")
	}
}

func unstructuredLabels(obj map[string]any) (map[string]string, bool, error) {
	out := map[string]string{}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	meta, _ := tmpl["metadata"].(map[string]any)
	l, _ := meta["labels"].(map[string]any)
	for k, v := range l {
		s, _ := v.(string)
		out[k] = s
	}
	return out, len(out) > 0, nil
}
