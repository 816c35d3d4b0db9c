package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/imagelist"
	"github.com/slipway-dev/slipway/pkg/version"
)

// TestConfigImages: the text output is the list, one reference a line, and -o json the same
// images with their components; both as the manifest loaded the way apply loads it gives.
func TestConfigImages(t *testing.T) {
	const m, tf = "../../examples/openstack.yaml", "../../examples/openstack-tf-output.json"
	res, err := config.Load(context.Background(), config.Options{ManifestPath: m, TerraformSource: tf, ImageTag: version.ImageTag()})
	if err != nil {
		t.Fatal(err)
	}
	want, err := imagelist.For(res.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, "", "config", "images", "-m", m, "-t", tf)
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !slices.Equal(lines, imagelist.Refs(want)) {
		t.Errorf("text output:\n%s\nwant the references of %v", out, want)
	}
	for _, c := range []string{imagelist.MachineController, imagelist.CCM, "kube-apiserver", "flannel"} {
		if !slices.ContainsFunc(want, func(img imagelist.Image) bool { return slices.Contains(img.Components, c) }) {
			t.Errorf("no image of %s in %v", c, want)
		}
	}

	js, stderr, code := run(t, "", "config", "images", "-o", "json", "-m", m, "-t", tf)
	if code != 0 {
		t.Fatalf("-o json: code %d: %s", code, stderr)
	}
	var got []imagelist.Image
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("-o json: %v\n%s", err, js)
	}
	if !slices.EqualFunc(got, want, func(a, b imagelist.Image) bool { return a.Ref == b.Ref && slices.Equal(a.Components, b.Components) }) {
		t.Errorf("-o json:\n%s\nwant %v", js, want)
	}
	var raw []map[string]any
	if json.Unmarshal([]byte(js), &raw) != nil || len(raw) == 0 || raw[0]["image"] == nil || raw[0]["components"] == nil {
		t.Errorf("-o json objects lack the keys image and components:\n%s", js)
	}
}
