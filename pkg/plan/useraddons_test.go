package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func obj(apiVersion, kind, ns, name, source, hash string) AddonObject {
	return AddonObject{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, Source: source, Hash: hash}
}

// TestUserAddons: the plan of the user addon set, from the objects addons.path renders and
// those the cluster holds with the set's label.
func TestUserAddons(t *testing.T) {
	hosts := []DesiredHost{{Name: "cp-1", Address: "10.0.0.1", Role: ControlPlane, Leader: true}}
	addons := map[string]string{"cni": "c1"}
	namespaced := map[string]bool{"/ConfigMap": true, "apps/Deployment": true, "/Namespace": false, "rbac.authorization.k8s.io/ClusterRole": false}
	web := obj("apps/v1", "Deployment", "", "web", "web.yaml:1", "h-web")
	cm := obj("v1", "ConfigMap", "apps", "settings", "web.yaml:20", "h-cm")
	role := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader", "rbac.yaml:1", "h-role")
	live := func(o AddonObject, hash string) AddonObject {
		o.Hash, o.Source = hash, strings.Split(o.Source, ":")[0]
		if o.Kind == "Deployment" {
			o.Namespace = "default"
		}
		return o
	}
	tests := []struct {
		name    string
		desired []AddonObject
		path    bool
		exists  bool
		live    []AddonObject
		steps   string
		changes *AddonChanges
		warn    string
	}{
		{name: "a new cluster: every object added, checked by the addons step itself", desired: []AddonObject{web, cm}, path: true,
			steps:   "kubeadm-init on cp-1; cni; approve-csrs; wait-nodes-ready; addons",
			changes: &AddonChanges{Add: []AddonObject{web, cm}}},
		{name: "converged: nothing to do, a Deployment without a namespace is the one in default", desired: []AddonObject{web, cm, role}, path: true, exists: true,
			live: []AddonObject{live(web, "h-web"), live(cm, "h-cm"), live(role, "h-role")}},
		{name: "one changed, one gone from the folder, one new: the API checks first", desired: []AddonObject{web, role}, path: true, exists: true,
			live:  []AddonObject{live(cm, "h-cm"), live(web, "h-old")},
			steps: "addons-dry-run; addons",
			changes: &AddonChanges{Add: []AddonObject{role}, Change: []AddonObject{obj("apps/v1", "Deployment", "default", "web", "web.yaml:1", "h-web")},
				Prune: []AddonObject{live(cm, "h-cm")}}},
		{name: "only a prune: nothing for the API to check", desired: []AddonObject{web}, path: true, exists: true,
			live:    []AddonObject{live(web, "h-web"), live(role, "h-role")},
			steps:   "addons",
			changes: &AddonChanges{Prune: []AddonObject{live(role, "h-role")}}},
		{name: "an empty folder prunes the set", path: true, exists: true, live: []AddonObject{live(role, "h-role"), live(cm, "h-cm")},
			steps: "addons", changes: &AddonChanges{Prune: []AddonObject{live(role, "h-role"), live(cm, "h-cm")}}},
		{name: "addons.path removed: what it applied stays, with a warning", exists: true, live: []AddonObject{live(role, "h-role")},
			warn: "addons.path is not set, and the cluster holds 1 objects that slipway applied from it"},
		{name: "a kind the API does not serve yet keeps its namespace as written", path: true, exists: true,
			desired: []AddonObject{obj("example.com/v1", "Widget", "", "w", "crd.yaml:9", "h-w")},
			steps:   "addons-dry-run; addons", changes: &AddonChanges{Add: []AddonObject{obj("example.com/v1", "Widget", "", "w", "crd.yaml:9", "h-w")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Desired{Version: "1.36.3", Hosts: hosts, Addons: addons, AddonsPath: tt.path, UserAddons: tt.desired}
			o := Observed{Hosts: bare(hosts)}
			if tt.exists { // no cluster, no API to say which kinds are namespaced
				o = converged(hosts, "1.36.3", addons)
				o.Cluster.UserAddons, o.Cluster.AddonNamespaced = tt.live, namespaced
			}
			p, err := Build(d, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range p.Steps {
				if !strings.HasPrefix(s.Name, "install") && s.Name != StepPrerequisites {
					got = append(got, s.String())
				}
			}
			if strings.Join(got, "; ") != tt.steps {
				t.Errorf("steps %q, want %q", strings.Join(got, "; "), tt.steps)
			}
			if !reflect.DeepEqual(p.Addons, tt.changes) {
				t.Errorf("addons %+v, want %+v", p.Addons, tt.changes)
			}
			if w := strings.Join(p.Warnings, "\n"); tt.warn == "" && w != "" || !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
		})
	}
}

// TestUserAddonsShown: the text plan and the JSON plan (--dry-run -o json) list the objects by
// kind, namespace, name and source, and never their hash (the object may be a Secret).
func TestUserAddonsShown(t *testing.T) {
	hosts := []DesiredHost{{Name: "cp-1", Address: "10.0.0.1", Role: ControlPlane, Leader: true}}
	o := converged(hosts, "1.36.3", nil)
	o.Cluster.UserAddons = []AddonObject{obj("v1", "Secret", "apps", "old", "old.yaml", "secret-hash-1")}
	o.Cluster.AddonNamespaced = map[string]bool{"/Secret": true}
	d := Desired{Version: "1.36.3", Hosts: hosts, AddonsPath: true, UserAddons: []AddonObject{obj("v1", "Secret", "apps", "new", "new.yaml:3", "secret-hash-2")}}
	p, err := Build(d, o)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	Print(&text, "demo", "1.36.3", p)
	for _, want := range []string{"addons-dry-run", "addons.path: 1 to add, 1 to prune", "  + Secret apps/new (new.yaml:3)", "  - Secret apps/old (old.yaml)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the plan does not show %q:\n%s", want, text.String())
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"addons":{"add":[{"apiVersion":"v1","kind":"Secret","namespace":"apps","name":"new","source":"new.yaml:3"}],"prune":[`) ||
		strings.Contains(string(data)+text.String(), "secret-hash") {
		t.Errorf("JSON plan: %s", data)
	}
}
