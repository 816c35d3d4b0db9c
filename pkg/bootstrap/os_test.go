package bootstrap_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
)

// TestOperatingSystemsRender keeps v1alpha1.OperatingSystems, the list that the manifest's
// validation and the admission webhook accept, equal to what Render boots: every operating
// system on it renders and has a golden file that TestRenderGolden checks, and the ones that
// earlier machine-controllers named but slipway does not boot are off it and refused here too.
func TestOperatingSystemsRender(t *testing.T) {
	if len(v1alpha1.OperatingSystems) == 0 {
		t.Fatal("no operating system is supported")
	}
	for _, name := range v1alpha1.OperatingSystems {
		t.Run(name, func(t *testing.T) {
			if _, err := bootstrap.Render(validConfig(t, name, "minimal")); err != nil {
				t.Fatalf("%s is accepted by validation and admission, and Render refuses it: %v", name, err)
			}
			if _, err := os.Stat(filepath.Join("testdata", name+".golden")); err != nil {
				t.Fatalf("%s is accepted by validation and admission but has no golden user-data test (testdata/%s.golden, a TestRenderGolden case): %v", name, name, err)
			}
		})
	}
	for _, name := range []string{"flatcar", "rhel", "rockylinux", "centos"} {
		if slices.Contains(v1alpha1.OperatingSystems, name) {
			t.Errorf("%s is on v1alpha1.OperatingSystems, and Render has no user-data for it", name)
		}
		if _, err := bootstrap.Render(validConfig(t, name, "minimal")); err == nil {
			t.Errorf("Render(%s) succeeded: add it to v1alpha1.OperatingSystems with a golden test, or refuse it", name)
		}
	}
}
