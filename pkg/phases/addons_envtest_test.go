package phases

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// addonsRun is a run of the addons phase with the real API of envtest.
type addonsRun struct {
	kc       *kube.Client
	cluster  *v1beta1.Cluster
	rendered Rendered
	log      bytes.Buffer
}

func (r *addonsRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *addonsRun) Rendered() Rendered                         { return r.rendered }
func (r *addonsRun) Manifest() *v1beta1.Cluster                 { return r.cluster }
func (r *addonsRun) Logf(host, format string, args ...any) {
	fmt.Fprintf(&r.log, host+": "+format+"\n", args...)
}

// The folder of TestUserAddonsPhase, first as written: a Namespace, a CustomResourceDefinition
// and an object of its kind in that Namespace, two ConfigMaps there, one in default (written
// without a namespace), and a ClusterRole.
var addonFolder = map[string]string{
	"00-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: {{ .ClusterName }}-apps}\n",
	"a.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: {{ .ClusterName }}-apps}\ndata: {version: {{ .KubernetesVersion }}}\n",
	"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: {{ .ClusterName }}-apps}\n---\n" +
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: {{ .ClusterName }}-reader}\nrules: []\n",
	"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.ua.example.com}
spec:
  group: ua.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
---
apiVersion: ua.example.com/v1
kind: Gadget
metadata: {name: g, namespace: {{ .ClusterName }}-apps}
spec: {size: 3}
`,
	"d.yml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ua-phase-d}\ndata: {endpoint: {{ .APIEndpoint | printf \"%q\" }}}\n",
}

func renderFolder(t *testing.T, c *v1beta1.Cluster, folder map[string]string) []addons.Object {
	t.Helper()
	var files []addons.File
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range folder {
			if !yield(k) {
				return
			}
		}
	}) {
		files = append(files, addons.File{Name: name, Data: []byte(folder[name])})
	}
	objs, err := addons.RenderSet(c.Name, files, addons.ValuesFor(c))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestUserAddonsPhase applies a folder to a real API server, then the folder with one file
// changed and one removed, then one with an object the API refuses: the first apply creates
// every object (those whose Namespace or CustomResourceDefinition the folder makes are checked
// when applied), labelled with the set and annotated with their file and hash, and records
// their kinds; the second changes the changed object in place and prunes the removed file's
// objects, and nothing else; the third is refused by the dry run, naming the file, line and
// document of each refused object, and changes nothing.
func TestUserAddonsPhase(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := &v1beta1.Cluster{Name: "ua-phase", Versions: v1beta1.Versions{Kubernetes: "v1.36.3"}, APIEndpoint: v1beta1.APIEndpoint{Host: "10.0.0.10"}}
	get := func(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
		if ns == "" {
			return kc.Dynamic.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		}
		return kc.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	gadgets := schema.GroupVersionResource{Group: "ua.example.com", Version: "v1", Resource: "gadgets"}
	must := func(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
		t.Helper()
		o, err := get(gvr, ns, name)
		if err != nil {
			t.Fatalf("%s %s: %v", gvr.Resource, addons.Ref(ns, name), err)
		}
		return o
	}
	gone := func(gvr schema.GroupVersionResource, ns, name string) {
		t.Helper()
		if _, err := get(gvr, ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: %v, want it pruned", gvr.Resource, addons.Ref(ns, name), err)
		}
	}

	// 1. The folder as written.
	r := &addonsRun{kc: kc, cluster: c, rendered: Rendered{UserAddons: renderFolder(t, c, addonFolder)}}
	if err := applyUserAddons(ctx, r); err != nil {
		t.Fatalf("first apply: %v\n%s", err, r.log.String())
	}
	a := must(cms, "ua-phase-apps", "a")
	if a.GetLabels()[addons.SetLabel] != "ua-phase" || a.GetAnnotations()[addons.SourceAnnotation] != "a.yaml" || a.GetAnnotations()[addons.HashAnnotation] == "" {
		t.Errorf("a: labels %v, annotations %v", a.GetLabels(), a.GetAnnotations())
	}
	d := must(cms, "default", "ua-phase-d")
	g := must(gadgets, "ua-phase-apps", "g")
	must(cms, "ua-phase-apps", "b")
	must(roles, "", "ua-phase-reader")
	if !strings.Contains(r.log.String(), "3 are checked when they are applied") || !strings.Contains(r.log.String(), "crd.yaml:14 (document 2, Gadget ua-phase-apps/g): its CustomResourceDefinition is in addons.path") {
		t.Errorf("log: %s", r.log.String())
	}
	kinds, err := applied.AddonKinds(ctx, kc)
	if err != nil || len(kinds) != 5 {
		t.Errorf("recorded kinds %v (%v), want the 5 kinds of the folder", kinds, err)
	}

	// 2. a.yaml changed, b.yaml removed.
	second := map[string]string{}
	for k, v := range addonFolder {
		second[k] = v
	}
	delete(second, "b.yaml")
	second["a.yaml"] = strings.Replace(addonFolder["a.yaml"], "{version: {{ .KubernetesVersion }}}", "{version: {{ .KubernetesVersion }}, changed: \"yes\"}", 1)
	r = &addonsRun{kc: kc, cluster: c, rendered: Rendered{UserAddons: renderFolder(t, c, second)}}
	if err := applyUserAddons(ctx, r); err != nil {
		t.Fatalf("second apply: %v\n%s", err, r.log.String())
	}
	a2 := must(cms, "ua-phase-apps", "a")
	if a2.GetUID() != a.GetUID() || a2.Object["data"].(map[string]any)["changed"] != "yes" || a2.GetAnnotations()[addons.HashAnnotation] == a.GetAnnotations()[addons.HashAnnotation] {
		t.Errorf("a was not changed in place: uid %s → %s, data %v", a.GetUID(), a2.GetUID(), a2.Object["data"])
	}
	gone(cms, "ua-phase-apps", "b")
	gone(roles, "", "ua-phase-reader")
	if must(cms, "default", "ua-phase-d").GetUID() != d.GetUID() || must(gadgets, "ua-phase-apps", "g").GetUID() != g.GetUID() {
		t.Error("an object still in the folder was replaced or pruned")
	}
	for _, want := range []string{"pruned ConfigMap ua-phase-apps/b (from b.yaml", "pruned ClusterRole ua-phase-reader (from b.yaml"} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("log lacks %q: %s", want, r.log.String())
		}
	}
	if kinds, _ := applied.AddonKinds(ctx, kc); len(kinds) != 4 {
		t.Errorf("recorded kinds %v, want the 4 kinds left", kinds)
	}

	// 3. An object the API refuses, and another with a field it does not know: nothing changes.
	third := map[string]string{}
	for k, v := range second {
		third[k] = v
	}
	third["a.yaml"] = strings.Replace(second["a.yaml"], `changed: "yes"`, `changed: "again"`, 1)
	third["c.yaml"] = "# no containers\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: broken, namespace: ua-phase-apps}\n" +
		"spec: {selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: []}}}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo, namespace: ua-phase-apps}\ndatta: {x: y}\n"
	r = &addonsRun{kc: kc, cluster: c, rendered: Rendered{UserAddons: renderFolder(t, c, third)}}
	err = applyUserAddons(ctx, r)
	for _, want := range []string{"the API server refuses 2 of the 7 objects of addons.path (server-side dry run; nothing was changed)",
		"c.yaml:1 (document 1, Deployment ua-phase-apps/broken): applying Deployment ua-phase-apps/broken:", "spec.template.spec.containers: Required value",
		"c.yaml:7 (document 2, ConfigMap ua-phase-apps/typo)", ".datta: field not declared in schema"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("third apply: %v, want an error containing %q", err, want)
		}
	}
	if got := must(cms, "ua-phase-apps", "a").Object["data"].(map[string]any)["changed"]; got != "yes" {
		t.Errorf("a changed to %v although the apply was refused", got)
	}
	gone(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "ua-phase-apps", "broken")
	gone(cms, "ua-phase-apps", "typo")
	// The dry-run step refuses the same, through the same check.
	if err := dryRunAddons(ctx, kc, r, r.rendered.UserAddons); err == nil || !strings.Contains(err.Error(), "c.yaml:1 (document 1, Deployment") {
		t.Errorf("the dry-run step: %v", err)
	}
}
