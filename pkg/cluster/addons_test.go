package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
)

// TestReadAddonFiles: every *.yaml and *.yml file of the folder and its subdirectories, in path
// order, named relative to the folder; other files and names starting with a dot are skipped.
func TestReadAddonFiles(t *testing.T) {
	dir := addonsDir(t, "b.yaml", "b", "a.yml", "a", "sub/c.YAML", "c", "sub/d.yaml", "d", "notes.txt", "n", "README.md", "r",
		".hidden.yaml", "h", ".git/config.yaml", "g", "z/.swp.yml", "s")
	files, err := readAddonFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Name+"="+string(f.Data))
	}
	if strings.Join(got, " ") != "a.yml=a b.yaml=b sub/c.YAML=c sub/d.yaml=d" {
		t.Errorf("read %v", got)
	}
	if _, err := readAddonFiles(filepath.Join(dir, "b.yaml")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the folder: %v", err)
	}
	if files, err := readAddonFiles(t.TempDir()); err != nil || len(files) != 0 {
		t.Errorf("an empty folder: %v, %v", files, err)
	}
}

// TestDesireUserAddons: the objects of addons.path reach the plan by name, source and hash,
// and the addons phase as rendered; without addons.path the plan compares none.
func TestDesireUserAddons(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	c.Addons = &v1beta1.Addons{Path: addonsDir(t, "web.yaml", "# web\n"+okAddon+"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .ClusterName }}-web, namespace: apps}\n")}
	d, err := Desire(c, inputs(t, c), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	u := d.Plan.UserAddons
	if !d.Plan.AddonsPath || len(u) != 2 || len(d.Rendered.UserAddons) != 2 || u[0].Source != "web.yaml:1" || u[1].Source != "web.yaml:7" ||
		u[1].Name != c.Name+"-web" || u[1].Namespace != "apps" || u[1].APIVersion != "apps/v1" || u[0].Hash != d.Rendered.UserAddons[0].Hash || u[0].Hash == "" {
		t.Errorf("desired %+v", u)
	}
	c.Addons = nil
	if d, err = Desire(c, inputs(t, c), &probe.Observed{}, false); err != nil || d.Plan.AddonsPath || d.Plan.UserAddons != nil {
		t.Errorf("without addons.path: %+v, %v", d.Plan, err)
	}

	// What slipway applies itself is not an addon's to apply, or to prune.
	c.Addons = &v1beta1.Addons{Path: addonsDir(t, "own.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-flannel-cfg, namespace: kube-flannel}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: slipway-state, namespace: kube-system}\n", "ok.yaml", okAddon)}
	_, err = Desire(c, inputs(t, c), &probe.Observed{}, false)
	var ce *config.Error
	for _, want := range []string{"own.yaml:1 (document 1, ConfigMap kube-flannel/kube-flannel-cfg): slipway applies this object itself (the CNI); an addon may not",
		"own.yaml:5 (document 2, ConfigMap kube-system/slipway-state): slipway applies this object itself (the record of what slipway applied)"} {
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("an addon of slipway's own objects: %v, want a config.Error containing %q", err, want)
		}
	}
}

// TestDryRunJSONListsAddons: apply --dry-run -o json shows the addons step and the objects of
// addons.path it adds, by kind, namespace, name and file; a fresh cluster has no API to check
// them with, so the plan has no addons-dry-run step (the addons step checks them first).
func TestDryRunJSONListsAddons(t *testing.T) {
	c := testCluster(t, "10.0.0.1")
	c.Addons = &v1beta1.Addons{Path: addonsDir(t, "a.yaml", okAddon, "sub/b.yml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: apps}\nstringData: {token: s3cr3t}\n")}
	target, _ := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp", "debian", true)})
	var out bytes.Buffer
	if err := Apply(context.Background(), target, ApplyOptions{DryRun: true, JSON: true, Out: &out, Log: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, s.Name)
	}
	want := &plan.AddonChanges{Add: []plan.AddonObject{{APIVersion: "v1", Kind: "ConfigMap", Name: "a", Source: "a.yaml:1"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "apps", Name: "s", Source: "sub/b.yml:1"}}}
	if steps[len(steps)-1] != plan.StepAddons || slices.Contains(steps, plan.StepAddonsDryRun) || !reflect.DeepEqual(p.Addons, want) {
		t.Errorf("steps %v, addons %+v", steps, p.Addons)
	}
	if strings.Contains(out.String(), "s3cr3t") || strings.Contains(out.String(), "hash") {
		t.Errorf("the plan shows a Secret's content or hash:\n%s", out.String())
	}
}
