package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/mirror"
)

const tag = "v1.2.3"

// loadWith loads a manifest as apply does, with its registryConfiguration.overwriteRegistry
// replaced by overwrite ("" removes it): the cluster a site installs with that manifest.
func loadWith(t *testing.T, manifest, tf, overwrite string) *v1beta1.Cluster {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	rc, _ := doc["registryConfiguration"].(map[string]any)
	if rc == nil {
		rc = map[string]any{}
	}
	delete(rc, "overwriteRegistry")
	if overwrite != "" {
		rc["overwriteRegistry"] = overwrite
	}
	doc["registryConfiguration"] = rc
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	// Loading does not open the files the manifest names, so they need not be beside it.
	p := filepath.Join(t.TempDir(), filepath.Base(manifest))
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := config.Load(context.Background(), config.Options{ManifestPath: p, TerraformSource: tf, ImageTag: tag})
	if err != nil {
		t.Fatalf("loading %s with overwriteRegistry %q: %v", manifest, overwrite, err)
	}
	return res.Cluster
}

// TestPlanMatchesImagelist is the promise mirror-images makes: every destination is exactly an
// image that a cluster installed with overwriteRegistry: REGISTRY pulls (config images of that
// manifest), every such image is a destination, and the sources are what the cluster pulls
// without overwriteRegistry; whatever overwriteRegistry the manifest itself says.
func TestPlanMatchesImagelist(t *testing.T) {
	const registry = "registry.site.example:5000/mirror"
	manifests, err := filepath.Glob("../imagelist/testdata/*.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no manifests in ../imagelist/testdata: %v", err)
	}
	examples, _ := filepath.Glob("../../examples/*.yaml")
	manifests = append(manifests, examples...)
	refs := func(c *v1beta1.Cluster) []string {
		imgs, err := imagelist.For(c)
		if err != nil {
			t.Fatal(err)
		}
		return imagelist.Refs(imgs)
	}
	for _, m := range manifests {
		tf := ""
		if filepath.Base(m) == "openstack.yaml" {
			tf = "../../examples/openstack-tf-output.json"
		}
		name := filepath.Base(filepath.Dir(m)) + "/" + filepath.Base(m)
		wantTo := refs(loadWith(t, m, tf, registry))
		wantFrom := refs(loadWith(t, m, tf, ""))
		for _, own := range []string{"", "other.example", registry} {
			t.Run(name+" with overwriteRegistry "+own, func(t *testing.T) {
				moves, err := mirror.Plan(loadWith(t, m, tf, own), registry, tag)
				if err != nil {
					t.Fatal(err)
				}
				var from, to []string
				for _, mv := range moves {
					from, to = append(from, mv.From), append(to, mv.To)
					if mv.From != mv.To && !strings.HasPrefix(mv.To, registry+"/") {
						t.Errorf("%s is copied to %s, outside %s", mv.From, mv.To, registry)
					}
				}
				if !slices.Equal(to, wantTo) {
					t.Errorf("destinations:\n%v\nthe cluster with overwriteRegistry %s pulls:\n%v", to, registry, wantTo)
				}
				slices.Sort(from)
				if from = slices.Compact(from); !slices.Equal(from, wantFrom) {
					t.Errorf("sources:\n%v\nthe cluster without overwriteRegistry pulls:\n%v", from, wantFrom)
				}
			})
		}
	}
}

func TestCheckRegistry(t *testing.T) {
	tests := []struct {
		registry, err string
	}{
		{registry: "registry.example.com"},
		{registry: "registry.example.com:5000"},
		{registry: "10.0.0.5:5000/site/mirror"},
		{registry: "localhost:5000"},
		{registry: "", err: "want host[:port][/path]"},
		{registry: "http://registry.example.com", err: "without a scheme"},
		{registry: "registry.example.com/", err: "want host[:port][/path]"},
		{registry: "Bad Registry", err: "want host[:port][/path]"},
		{registry: "user:secret@registry.example.com", err: "without credentials"},
		{registry: "registry.example.com/Upper", err: "is not a repository path"},
	}
	for _, tt := range tests {
		t.Run(tt.registry, func(t *testing.T) {
			err := mirror.CheckRegistry(tt.registry)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("CheckRegistry(%q) = %v, want %q", tt.registry, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
