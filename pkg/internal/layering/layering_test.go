package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/slipway-dev/slipway/"

// rules: a package (by path prefix, relative to the module) may not import any of the listed
// path prefixes.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"pkg/apis/", []string{"pkg/cli", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/ssh", "pkg/controller", "pkg/cloud", "pkg/config", "pkg/terraform"}, "API types are the bottom layer"},
	{"pkg/ssh", []string{"pkg/apis", "pkg/cli", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/config"}, "the SSH layer only ships strings and files"},
	{"pkg/scripts", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access"}, "renderers are pure functions"},
	{"pkg/kubeadm", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access"}, "renderers are pure functions"},
	{"pkg/bootstrap", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access", "pkg/controller"}, "renderers are pure functions"},
	{"pkg/encryption", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access"}, "the encryption configuration is rendered and read by pure functions; the phases ship it"},
	{"pkg/addons", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access"}, "renderers are pure functions"},
	{"pkg/plan", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access", "pkg/applied", "pkg/inventory"}, "planning is a pure function of the desired and observed states"},
	{"pkg/probe", []string{"pkg/phases", "pkg/cluster", "pkg/cli"}, "the probe observes: it uses nothing of the executor, so observing can never change the cluster"},
	{"pkg/phases", []string{"pkg/probe", "pkg/cluster", "pkg/cli"}, "phases act on what they are given: observing is the probe's job and deciding is the plan's"},
	{"pkg/access", []string{"pkg/phases", "pkg/probe", "pkg/cluster", "pkg/cli"}, "access to the cluster sits below the probe and the phases, which share it"},
	{"pkg/applied", []string{"pkg/phases", "pkg/probe", "pkg/cluster", "pkg/cli", "pkg/ssh"}, "the record of what was applied sits below the probe and the phases, which share it"},
	{"pkg/inventory", []string{"pkg/phases", "pkg/probe", "pkg/cluster", "pkg/access", "pkg/kube"}, "the inventory is the manifest's hosts, below everything that reaches them"},
	{"pkg/controller", []string{"pkg/cloud/openstack", "pkg/ssh", "pkg/cli", "pkg/cluster", "pkg/phases", "pkg/probe"}, "controllers talk to clouds only through pkg/cloud"},
	{"pkg/webhook", []string{"pkg/cloud/openstack", "pkg/ssh", "pkg/cli", "pkg/cluster"}, "admission makes no cloud calls"},
	{"pkg/images", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access", "pkg/controller"}, "image assembly is a function of binaries; it reaches no host or cluster"},
	{"pkg/mirror", []string{"pkg/ssh", "pkg/kube", "pkg/cluster", "pkg/phases", "pkg/probe", "pkg/access", "pkg/controller"}, "mirror-images copies between registries; it reaches no host or cluster"},
	{"pkg/cloud", []string{"pkg/controller", "pkg/webhook", "pkg/cli", "pkg/cluster", "pkg/ssh"}, "providers sit below the controllers"},
	{"pkg/drain", []string{"pkg/"}, "the drain is a leaf over client-go, shared by the machine-controller and apply's upgrades"},
	{"pkg/", []string{"pkg/cli", "test/", "cmd/"}, "only main packages use the CLI, and product code never imports tests"},
}

func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			target, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			for _, r := range rules {
				if !strings.HasPrefix(rel, r.pkg) || (r.pkg == "pkg/" && strings.HasPrefix(rel, "pkg/cli/")) {
					continue
				}
				for _, bad := range r.forbidden {
					if within(target, bad) && !strings.HasPrefix(filepath.Dir(rel), strings.TrimSuffix(bad, "/")) {
						t.Errorf("%s imports %s: %s", rel, target, r.why)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		for _, p := range append([]string{r.pkg}, r.forbidden...) {
			if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(p, "/"))); err != nil {
				t.Errorf("rule for %s names %s, which does not exist: a rename left the rule checking nothing", r.pkg, p)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d files; the walk is broken", checked)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal("the repository root was not found")
	}
}

// within reports whether the import path target is the package pkg or below it, by whole path
// elements: pkg/kubeversion is not within pkg/kube.
func within(target, pkg string) bool {
	pkg = strings.TrimSuffix(pkg, "/")
	return target == pkg || strings.HasPrefix(target, pkg+"/")
}
