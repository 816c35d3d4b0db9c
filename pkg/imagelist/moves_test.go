package imagelist_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/imagelist"
)

// TestMoves: for every manifest, the pairs' To are For(to)'s references and their From are
// For(from)'s, each image of from paired with the one to runs in its place.
func TestMoves(t *testing.T) {
	for _, m := range clusters(t) {
		t.Run(m.name, func(t *testing.T) {
			from, to := m.c.WithOverwriteRegistry("", "v1.2.3"), m.c.WithOverwriteRegistry("mirror.example:5000/site", "v1.2.3")
			moves, err := imagelist.Moves(from, to)
			if err != nil {
				t.Fatal(err)
			}
			var froms, tos []string
			for _, mv := range moves {
				froms, tos = append(froms, mv.From), append(tos, mv.To)
				if mv.From == mv.To && mv.To != "quay.example.com/team/machine-controller:v9" {
					t.Errorf("%s is not moved", mv.From)
				}
				// kubeadm drops CoreDNS's extra path element under an overwritten registry.
				if strings.Contains(mv.To, "/coredns:") && !strings.HasPrefix(mv.From, "registry.k8s.io/coredns/coredns:") {
					t.Errorf("CoreDNS %s comes from %s", mv.To, mv.From)
				}
			}
			want := func(c *v1beta1.Cluster) []string {
				imgs, err := imagelist.For(c)
				if err != nil {
					t.Fatal(err)
				}
				return imagelist.Refs(imgs)
			}
			if !slices.Equal(tos, want(to)) {
				t.Errorf("destinations %v, want %v", tos, want(to))
			}
			slices.Sort(froms)
			if !slices.Equal(slices.Compact(froms), want(from)) {
				t.Errorf("sources %v, want %v", froms, want(from))
			}
		})
	}
}

// TestMovesOfDifferentClusters: clusters that differ in more than their registry are refused.
func TestMovesOfDifferentClusters(t *testing.T) {
	a, b := load(t, "default"), load(t, "cilium")
	if _, err := imagelist.Moves(a, b); err == nil || !strings.Contains(err.Error(), "differ only in their registry") {
		t.Errorf("Moves() error = %v", err)
	}
}
