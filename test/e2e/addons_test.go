package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// checkAddons runs addons.path on the running cluster that params describe: a folder with two
// manifests is applied after a dry run; the next apply changes one object in place and prunes
// the other file's; a file that does not parse, and then an object the API refuses, each stop
// apply before anything changes; an empty folder prunes the rest, so the scenarios after this
// one see the cluster as it was.
func (h *harness) checkAddons(t *testing.T, params manifestParams, hosts []string) {
	dir := filepath.Join(h.dir, "addons")
	write := func(files map[string]string) {
		t.Helper()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	params.Extra = "addons: {path: ./addons}"
	m := h.writeManifest("with-addons.yaml", params)
	c := h.kube("e2e")
	ctx := context.Background()
	web := "apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e-addons}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: e2e-addons}\ndata: {version: {{ .KubernetesVersion }}, cluster: {{ .ClusterName }}}\n"
	extra := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: e2e-addons}\ndata: {a: b}\n"

	write(map[string]string{"web.yaml": web, "extra.yaml": extra})
	p := h.plan(m)
	if got := strings.Join(stepList(p), "; "); got != "addons-dry-run; addons" || p.Addons == nil || len(p.Addons.Add) != 3 {
		t.Fatalf("plan of a new folder: %s, addons %+v; want addons-dry-run and addons adding 3 objects", got, p.Addons)
	}
	h.mustApply(m)
	first, err := c.CoreV1().ConfigMaps("e2e-addons").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Data["cluster"] != "e2e" || first.Labels[addons.SetLabel] != "e2e" || first.Annotations[addons.SourceAnnotation] != "web.yaml" {
		t.Errorf("web: data %v, labels %v, annotations %v", first.Data, first.Labels, first.Annotations)
	}
	if p := h.plan(m); len(p.Steps) != 0 {
		t.Fatalf("plan after the folder was applied: %s; want nothing to do", stepList(p))
	}

	write(map[string]string{"web.yaml": strings.Replace(web, "{version:", "{changed: \"yes\", version:", 1)})
	p = h.plan(m)
	if p.Addons == nil || len(p.Addons.Add) != 0 || len(p.Addons.Change) != 1 || p.Addons.Change[0].Name != "web" ||
		len(p.Addons.Prune) != 1 || p.Addons.Prune[0] != (plan.AddonObject{APIVersion: "v1", Kind: "ConfigMap", Namespace: "e2e-addons", Name: "extra", Source: "extra.yaml"}) {
		t.Fatalf("plan with web.yaml changed and extra.yaml removed: %+v", p.Addons)
	}
	h.mustApply(m)
	changed, err := c.CoreV1().ConfigMaps("e2e-addons").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || changed.UID != first.UID || changed.Data["changed"] != "yes" {
		t.Errorf("web was not changed in place: %v, uid %s → %s, data %v", err, first.UID, changed.UID, changed.Data)
	}
	if _, err := c.CoreV1().ConfigMaps("e2e-addons").Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("extra, whose file was removed: %v; want it pruned", err)
	}

	// A broken file, then an object the API refuses: each stops apply before any change, on the
	// hosts or in the cluster.
	before := h.fingerprints(hosts)
	for _, bad := range []struct{ file, data, want string }{
		{"broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n data: x\n", "broken.yaml:"},
		{"refused.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: refused, namespace: e2e-addons}\n" +
			"spec: {selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, spec: {containers: []}}}\n",
			"refused.yaml:1 (document 1, Deployment e2e-addons/refused)"},
	} {
		write(map[string]string{"web.yaml": strings.Replace(web, "{version:", "{changed: \"again\", version:", 1), bad.file: bad.data})
		r := h.slipway(nil, "apply", "-m", m, "--auto-approve")
		if r.code == 0 || !strings.Contains(r.out, bad.want) {
			t.Errorf("apply with %s: exit %d; want a failure naming %q", bad.file, r.code, bad.want)
		}
		if cm, err := c.CoreV1().ConfigMaps("e2e-addons").Get(ctx, "web", metav1.GetOptions{}); err != nil || cm.Data["changed"] != "yes" {
			t.Errorf("after the refused apply with %s, web holds %v (%v); want it unchanged", bad.file, cm.Data, err)
		}
	}
	if after := h.fingerprints(hosts); after != before {
		t.Errorf("a refused apply changed the hosts:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// An empty folder prunes the set, the Namespace too.
	write(nil)
	h.mustApply(m)
	if ns, err := c.CoreV1().Namespaces().Get(ctx, "e2e-addons", metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("the Namespace of the pruned set is still there")
	}
}
