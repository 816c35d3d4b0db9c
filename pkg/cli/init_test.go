package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// TestInit: init writes each shape's manifest, and for OpenStack a copy of terraform/openstack,
// each of which config dump accepts (the OpenStack one with the example's output shape); it
// overwrites nothing, and a refused run writes nothing at all.
func TestInit(t *testing.T) {
	for _, shape := range v1beta1.Shapes {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			file, tf := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "infra")
			args := []string{"init", "--shape", shape, "--file", file}
			if shape == v1beta1.ShapeOpenStack {
				args = append(args, "--terraform-dir", tf)
			}
			out, stderr, code := run(t, "", args...)
			if code != ExitOK || out != "" || !strings.Contains(stderr, "wrote "+file) {
				t.Fatalf("code %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
			want, _ := v1beta1.Starter(shape)
			if got := mustReadFile(t, file); got != want {
				t.Errorf("the manifest is not the %s starter:\n%s", shape, got)
			}
			dump := []string{"config", "dump", "-m", file}
			if shape == v1beta1.ShapeOpenStack {
				dump = append(dump, "-t", "../../examples/openstack-tf-output.json")
				repo, _ := filepath.Glob("../../terraform/openstack/*.tf")
				repo = append(repo, "../../terraform/openstack/terraform.tfvars.example")
				got, _ := os.ReadDir(tf)
				if len(got) != len(repo) || len(repo) < 5 {
					t.Errorf("%d files in %s, want the example's %d", len(got), tf, len(repo))
				}
				for _, f := range repo {
					if mustReadFile(t, filepath.Join(tf, filepath.Base(f))) != mustReadFile(t, f) {
						t.Errorf("%s is not a copy of %s", filepath.Join(tf, filepath.Base(f)), f)
					}
				}
			}
			if _, stderr, code := run(t, "", dump...); code != ExitOK {
				t.Errorf("config dump of the %s manifest: code %d\n%s", shape, code, stderr)
			}
			// A second run overwrites nothing.
			if err := os.WriteFile(file, []byte("edited\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := run(t, "", args...); code != ExitFailure || !strings.Contains(stderr, "overwrites nothing") || mustReadFile(t, file) != "edited\n" {
				t.Errorf("a second init: code %d, stderr:\n%s", code, stderr)
			}
		})
	}

	// A Terraform file in the way stops init before it writes the manifest.
	dir := t.TempDir()
	file, tf := filepath.Join(dir, "cluster.yaml"), filepath.Join(dir, "terraform")
	if err := os.MkdirAll(tf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tf, "main.tf"), []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "", "init", "--shape", "openstack", "--file", file, "--terraform-dir", tf)
	if code != ExitFailure || !strings.Contains(stderr, filepath.Join(tf, "main.tf")+" exists") || fileExists(file) {
		t.Errorf("init over a Terraform file: code %d, manifest written %t, stderr:\n%s", code, fileExists(file), stderr)
	}
	if entries, _ := os.ReadDir(tf); len(entries) != 1 {
		t.Errorf("a refused init wrote into %s: %v", tf, entries)
	}

	out, _, code := run(t, "", "init", "--file", "-")
	if want, _ := v1beta1.Starter("single"); code != ExitOK || out != want {
		t.Errorf("--file - prints the single-host starter: code %d\n%s", code, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"init", "--shape", "aws"}, `--shape "aws" is not supported; use one of single, ha, openstack`},
		{[]string{"init", "--shape", "ha", "--terraform-dir", "x"}, "--terraform-dir is for --shape openstack"},
		{[]string{"init", "-m", "cluster.yaml"}, "slipway init does not read --manifest (-m)"},
	} {
		if out, stderr, code := run(t, "", tt.args...); code != ExitUsage || out != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: code %d, stderr does not say %q:\n%s", tt.args, code, tt.want, stderr)
		}
	}
	if !slices.Equal(v1beta1.Shapes, []string{"single", "ha", "openstack"}) {
		t.Errorf("shapes %v", v1beta1.Shapes)
	}
}
