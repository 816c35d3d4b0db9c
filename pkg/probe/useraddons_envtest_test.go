package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/test/envtest"
)

func renderAddons(t *testing.T, files ...string) []addons.Object {
	t.Helper()
	var fs []addons.File
	for i := 0; i < len(files); i += 2 {
		fs = append(fs, addons.File{Name: files[i], Data: []byte(files[i+1])})
	}
	objs, err := addons.RenderSet("ua-probe", fs, addons.Values{ClusterName: "ua-probe"})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// desiredAddons is what apply's Desire makes of the objects for the plan.
func desiredAddons(objs []addons.Object) plan.Desired {
	d := plan.Desired{Version: "1.36.3", AddonsPath: true}
	for _, o := range objs {
		d.UserAddons = append(d.UserAddons, plan.AddonObject{APIVersion: o.Obj.GetAPIVersion(), Kind: o.Obj.GetKind(),
			Namespace: o.Obj.GetNamespace(), Name: o.Obj.GetName(), Source: fmt.Sprintf("%s:%d", o.File, o.Line), Hash: o.Hash})
	}
	return d
}

// TestUserAddonsObserved: the probe finds the objects of the set that a real API server holds,
// by the set's label, across the recorded kinds and the desired ones (and neither unlabelled
// objects nor another set's, nor a recorded kind the API no longer serves), with the hash each
// carries; from that the plan of the same folder is empty, and that of a changed folder lists
// what to add, change and prune.
func TestUserAddonsObserved(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := env.Namespace(t)
	first := renderAddons(t,
		"cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: "+ns+"}\ndata: {a: b}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ua-probe-default}\n",
		"old.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ua-probe-old}\nrules: []\n")
	var objs []*unstructured.Unstructured
	var kinds []schema.GroupVersionKind
	for _, o := range first {
		objs = append(objs, o.Obj)
		kinds = append(kinds, o.Obj.GroupVersionKind())
	}
	if err := kc.ApplyWith(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := applied.RecordAddonKinds(ctx, kc, append(kinds, schema.GroupVersionKind{Group: "gone.example.com", Version: "v1", Kind: "Thing"})); err != nil {
		t.Fatal(err)
	}
	for name, labels := range map[string]map[string]string{"unlabelled": nil, "other-set": {addons.SetLabel: "other"}} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
		if _, err := env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	live, namespaced, err := UserAddons(ctx, kc, "ua-probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range live {
		got = append(got, o.Kind+" "+addons.Ref(o.Namespace, o.Name)+" "+o.Source+" "+o.Hash)
	}
	want := []string{"ConfigMap default/ua-probe-default cm.yaml " + first[1].Hash, "ConfigMap " + ns + "/kept cm.yaml " + first[0].Hash,
		"ClusterRole ua-probe-old old.yaml " + first[2].Hash}
	slices.Sort(got) // a kind's list is in the API's order
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the probe saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(namespaced) != 2 || !namespaced["/ConfigMap"] || namespaced["rbac.authorization.k8s.io/ClusterRole"] {
		t.Errorf("namespaced %v", namespaced)
	}

	observed := plan.Observed{Cluster: plan.ClusterState{Exists: true, Version: "v1.36.3", UserAddons: live, AddonNamespaced: namespaced}}
	if p, err := plan.Build(desiredAddons(first), observed); err != nil || !p.Empty() {
		t.Errorf("the plan of the folder just applied: %+v, %v; want it empty", p, err)
	}

	second := renderAddons(t,
		"cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: "+ns+"}\ndata: {a: c}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ua-probe-default}\n",
		"new.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: new, namespace: "+ns+"}\nstringData: {token: s3cr3t}\n")
	p, err := plan.Build(desiredAddons(second), observed)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, s.Name)
	}
	if strings.Join(steps, " ") != "addons-dry-run addons" || p.Addons == nil || len(p.Addons.Add) != 1 || p.Addons.Add[0].Name != "new" ||
		len(p.Addons.Change) != 1 || p.Addons.Change[0].Name != "kept" || len(p.Addons.Prune) != 1 || p.Addons.Prune[0].Name != "ua-probe-old" {
		t.Errorf("the plan of the changed folder: steps %v, addons %+v", steps, p.Addons)
	}
}
