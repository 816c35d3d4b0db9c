package addons_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/test/golden"
)

// values are the template values of a typical cluster.
var values = addons.Values{
	ClusterName: "demo", KubernetesVersion: "v1.36.3", PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12",
	ServiceDomain: "cluster.local", APIEndpoint: "10.0.0.10:6443", APIHost: "10.0.0.10", APIPort: 6443,
}

// readSet reads the files of testdata/useraddons/<name>, sorted.
func readSet(t *testing.T, name string) []addons.File {
	t.Helper()
	dir := filepath.Join("testdata", "useraddons", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []addons.File
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, addons.File{Name: e.Name(), Data: data})
	}
	return files
}

// TestRenderSetGolden renders testdata/useraddons/set (a Namespace, then a file of several
// documents with comment-only and empty ones, every template value and a literal "{{") to
// testdata/useraddons/set.golden: each object with where it came from, its label, source
// annotation and hash.
func TestRenderSetGolden(t *testing.T) {
	objs, err := addons.RenderSet("demo", readSet(t, "set"), values)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# %s hash %s\n---\n%s", o, o.Hash, data)
	}
	golden.Check(t, filepath.Join("testdata", "useraddons", "set.golden"), b.Bytes())
	if len(objs) != 3 || objs[1].Line != 4 || objs[1].Doc != 1 || objs[2].Doc != 2 {
		t.Errorf("objects %v: want the ConfigMap as document 1 at line 4 and the ClusterRole as document 2", objs)
	}
	for _, o := range objs {
		if o.Obj.GetLabels()[addons.SetLabel] != "demo" || o.Obj.GetAnnotations()[addons.HashAnnotation] != o.Hash || len(o.Hash) != 16 {
			t.Errorf("%s: labels %v, annotations %v", o, o.Obj.GetLabels(), o.Obj.GetAnnotations())
		}
	}
	// The hash follows the content, and only the content.
	again, _ := addons.RenderSet("demo", readSet(t, "set"), values)
	other := values
	other.KubernetesVersion = "v1.37.2"
	changed, _ := addons.RenderSet("demo", readSet(t, "set"), other)
	if again[1].Hash != objs[1].Hash || changed[1].Hash == objs[1].Hash || changed[0].Hash != objs[0].Hash {
		t.Errorf("hashes: %s, again %s, with another version %s; the Namespace's %s and %s", objs[1].Hash, again[1].Hash, changed[1].Hash, objs[0].Hash, changed[0].Hash)
	}
}

// TestRenderSetRefuses: every problem of the folder is reported at once, each naming its file
// and line, and no object is returned.
func TestRenderSetRefuses(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	tests := []struct {
		name  string
		files []addons.File
		want  []string
	}{
		{"YAML that does not parse, in the second document", []addons.File{{Name: "bad.yaml", Data: []byte(cm + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n data: x\n")}},
			[]string{"bad.yaml:9: document 2: yaml: line 9: did not find expected key"}},
		{"a duplicate key", []addons.File{{Name: "dup.yaml", Data: []byte("\n\n" + cm + "  name: b\n")}},
			[]string{`dup.yaml:7: document 1: yaml: unmarshal errors:`, `line 7: key "name" already set in map`}},
		{"a template that does not parse", []addons.File{{Name: "t.yaml", Data: []byte(cm + "data:\n  x: {{ .ClusterName \n")}},
			[]string{"template: t.yaml:7: unclosed action started at t.yaml:6"}},
		{"a value that does not exist", []addons.File{{Name: "sub/v.yaml", Data: []byte(cm + "data:\n  x: {{ .Region }}\n")}},
			[]string{"template: sub/v.yaml:6:8: executing", "can't evaluate field Region"}},
		{"no kind", []addons.File{{Name: "k.yaml", Data: []byte("---\napiVersion: v1\nmetadata: {name: a}\n")}},
			[]string{"k.yaml:2: document 1: not a Kubernetes object: apiVersion and kind must be set"}},
		{"no name", []addons.File{{Name: "n.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n")}},
			[]string{"n.yaml:1: document 1: ConfigMap has no metadata.name"}},
		{"a List", []addons.File{{Name: "l.yaml", Data: []byte("apiVersion: v1\nkind: List\nitems: []\nmetadata: {name: x}\n")}},
			[]string{"l.yaml:1: document 1: a List is not applied"}},
		{"a typed list", []addons.File{{Name: "l.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMapList\nitems: []\nmetadata: {name: x}\n")}},
			[]string{"l.yaml:1: document 1: a ConfigMapList is not applied"}},
		{"slipway's label", []addons.File{{Name: "s.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {addons.slipway.dev/set: other}}\n")}},
			[]string{"s.yaml:1: document 1: metadata.labels[addons.slipway.dev/set] is set by slipway"}},
		{"a label that is a number", []addons.File{{Name: "s.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {tier: 1}}\n")}},
			[]string{"s.yaml:1: document 1: metadata.labels must map strings to strings"}},
		{"one object twice", []addons.File{{Name: "a.yaml", Data: []byte(cm)}, {Name: "b.yaml", Data: []byte("# again\n" + cm)}},
			[]string{"b.yaml:1: document 1: ConfigMap a is also defined at a.yaml:1"}},
		{"several problems at once", []addons.File{{Name: "a.yaml", Data: []byte("kind: [\n")}, {Name: "b.yaml", Data: []byte("{{ end }}")}, {Name: "c.yaml", Data: []byte(cm)}},
			[]string{"a.yaml:", "template: b.yaml:1: unexpected {{end}}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := addons.RenderSet("demo", tt.files, values)
			if err == nil || objs != nil {
				t.Fatalf("RenderSet = %v, %v; want an error and no objects", objs, err)
			}
			n := 1
			if tt.name == "several problems at once" {
				n = 2
			}
			if agg, ok := err.(utilerrors.Aggregate); !ok || len(agg.Errors()) != n {
				t.Errorf("want %d problems, each its own: %v", n, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestValuesDocumented: the doc of addons.path, which config print --full shows, names every
// template value, and no other.
func TestValuesDocumented(t *testing.T) {
	doc := v1beta1.FieldDoc("Addons", "path")
	var want []string
	for f := range reflect.TypeFor[addons.Values]().Fields() {
		want = append(want, "{{ ."+f.Name+" }}")
	}
	got := regexp.MustCompile(`\{\{ \.[A-Za-z]+ \}\}`).FindAllString(doc, -1)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the doc of addons.path names %v, want the fields of addons.Values %v:\n%s", got, want, doc)
	}
}

// TestValuesFor: the values come from the defaulted manifest; an IPv6 endpoint is bracketed.
func TestValuesFor(t *testing.T) {
	c := load(t, "flannel")
	v := addons.ValuesFor(c)
	want := addons.Values{ClusterName: c.Name, KubernetesVersion: c.Versions.Kubernetes, PodSubnet: c.ClusterNetwork.PodSubnet,
		ServiceSubnet: c.ClusterNetwork.ServiceSubnet, ServiceDomain: c.ClusterNetwork.ServiceDomainName,
		APIEndpoint: c.APIEndpoint.Host + ":6443", APIHost: c.APIEndpoint.Host, APIPort: 6443}
	if v != want || v.PodSubnet == "" || v.ServiceDomain == "" || !strings.HasPrefix(v.KubernetesVersion, "v") {
		t.Errorf("ValuesFor = %+v, want %+v", v, want)
	}
	c.APIEndpoint.Host, c.APIEndpoint.Port = "fd00::10", 8443
	if v := addons.ValuesFor(c); v.APIEndpoint != "[fd00::10]:8443" || v.APIPort != 8443 {
		t.Errorf("IPv6: %+v", v)
	}
}

// TestRenderSetAcceptsAKindEndingInList: a custom resource whose kind ends in List, without the
// items of a list, is an object like any other.
func TestRenderSetAcceptsAKindEndingInList(t *testing.T) {
	objs, err := addons.RenderSet("demo", []addons.File{{Name: "a.yaml", Data: []byte("apiVersion: example.com/v1\nkind: AllowList\nmetadata: {name: a}\nspec: {cidrs: []}\n")}}, values)
	if err != nil || len(objs) != 1 {
		t.Fatalf("RenderSet = %v, %v", objs, err)
	}
}
