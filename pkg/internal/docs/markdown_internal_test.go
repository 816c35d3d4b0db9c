package docs

import (
	"slices"
	"testing"
)

func TestAnchor(t *testing.T) {
	for _, tt := range []struct{ title, want string }{
		{"Layout", "layout"},
		{"Worker pools, end to end", "worker-pools-end-to-end"},
		{"User addons (`addons.path`)", "user-addons-addonspath"},
		{"The manifest (`slipway.dev/v1beta1`, kind `Cluster`)", "the-manifest-slipwaydevv1beta1-kind-cluster"},
		{"Slipway's images", "slipways-images"},
		{"etcd alarms", "etcd-alarms"},
		{"snake_case and - dashes", "snake_case-and---dashes"},
		{"See [the docs](docs/x.md)", "see-the-docs"},
	} {
		if got := anchor(tt.title); got != tt.want {
			t.Errorf("anchor(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	md := parse("# Title\n\ntext [a](x.md) `[b](not-a-link)`\n\n## Layout\n\n```\n# not a heading\n[c](in-code)\n```\n\n## Layout\n[d](#layout-1)\n")
	if want := []string{"Title", "Layout", "Layout"}; !slices.Equal(md.headings, want) {
		t.Errorf("headings %q, want %q", md.headings, want)
	}
	if got, want := md.links(), []string{"x.md", "#layout-1"}; !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
	if a := md.anchors(); !a["title"] || !a["layout"] || !a["layout-1"] || len(a) != 3 {
		t.Errorf("anchors %v", a)
	}
	if len(md.blocks) != 1 || md.blocks[0].after != "Layout" || !slices.Equal(md.blocks[0].lines, []string{"# not a heading", "[c](in-code)"}) {
		t.Errorf("blocks %+v", md.blocks)
	}
}

func TestExpand(t *testing.T) {
	got := expand("pkg/controller/{machine,health}")
	if want := []string{"pkg/controller/machine", "pkg/controller/health"}; !slices.Equal(got, want) {
		t.Errorf("expand = %q, want %q", got, want)
	}
}
