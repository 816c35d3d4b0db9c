package v1beta1

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/kubeversion"
)

// minorsIn lists the Kubernetes minors ("v1.36") a text names.
func minorsIn(s string) []string {
	return regexp.MustCompile(`v1\.\d+`).FindAllString(s, -1)
}

// TestWindowDocumented: the window is written once, in package kubeversion; the reference (from
// the doc comment of versions.kubernetes) and the README's version line must name exactly its
// minors, so that raising the window without the docs fails here.
func TestWindowDocumented(t *testing.T) {
	var want []string
	for m := kubeversion.MinMinor; m <= kubeversion.MaxMinor; m++ {
		want = append(want, fmt.Sprintf("v1.%d", m))
	}
	check := func(where, text string) {
		t.Helper()
		got := minorsIn(text)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s names the minors %v, want exactly the window %v:\n%s", where, got, want, text)
		}
	}
	doc := strings.Join(strings.Fields(FieldDoc("Versions", "kubernetes")), " ")
	// The doc's example version (v1.36.3) is not a statement of the window: look only at the
	// list after "supports the minors".
	stated := regexp.MustCompile(`supports the minors ((?:v1\.\d+(?:, | and )?)+)`).FindStringSubmatch(doc)
	if stated == nil {
		t.Fatalf("the doc of versions.kubernetes does not say which minors slipway supports:\n%s", doc)
	}
	check("the doc of versions.kubernetes", stated[1])

	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const head = "**Supported Kubernetes versions:**"
	i := strings.Index(string(readme), head)
	if i < 0 {
		t.Fatalf("README.md has no %q line", head)
	}
	line, _, _ := strings.Cut(string(readme[i+len(head):]), "(")
	check("README.md's version line", line)
	if !strings.Contains(kubeversion.List(), want[len(want)-1]) {
		t.Errorf("kubeversion.List() = %q", kubeversion.List())
	}
}
