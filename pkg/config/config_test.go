package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// TestFixtures loads every testdata/valid-*.yaml, which must succeed, and every
// testdata/invalid-*.yaml, which must fail with each message listed in its "# want:" lines.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			_, err := Load(context.Background(), Options{ManifestPath: f})
			if strings.HasPrefix(name, "valid-") {
				if err != nil {
					t.Fatalf("valid fixture failed to load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid fixture loaded without error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *config.Error so that the CLI exits with the config code", err)
			}
			wants := wantLines(t, f)
			if len(wants) == 0 {
				t.Fatal("invalid fixture has no '# want:' lines")
			}
			for _, w := range wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func wantLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wants []string
	for _, l := range strings.Split(string(data), "\n") {
		if w, ok := strings.CutPrefix(l, "# want: "); ok {
			wants = append(wants, w)
		}
	}
	return wants
}

// TestExamples keeps examples/ loadable: each example loads on its own, or with the Terraform
// output next to it (<name>-tf-output.json) when there is one.
func TestExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) < 3 {
		t.Fatalf("expected the examples directory to hold examples, found %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "kind: MachineDeployment") {
				t.Skip("not a cluster manifest")
			}
			opts := Options{ManifestPath: f}
			if tf := strings.TrimSuffix(f, ".yaml") + "-tf-output.json"; fileExists(tf) {
				opts.TerraformSource = tf
			}
			res, err := Load(context.Background(), opts)
			if err != nil {
				t.Fatalf("example does not load: %v", err)
			}
			for _, w := range res.Warnings {
				t.Errorf("example has a warning: %s", w)
			}
		})
	}
}

func TestLoadInputErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
		// argument: the options name no input (*ArgumentError), rather than a bad one (*Error).
		argument bool
	}{
		{"no manifest", Options{}, "no manifest: pass -m/--manifest", true},
		{"both on stdin", Options{ManifestPath: "-", TerraformSource: "-"}, "cannot both be read from stdin", true},
		{"missing file", Options{ManifestPath: "testdata/nope.yaml"}, "no such file", false},
		{"missing terraform file", Options{ManifestPath: "testdata/valid-minimal.yaml", TerraformSource: "testdata/nope.json"}, "no such file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), tt.opts)
			var ce *Error
			var ae *ArgumentError
			if errors.As(err, &ce) == tt.argument || errors.As(err, &ae) != tt.argument || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v (%T), want an error containing %q (an argument error: %t)", err, err, tt.want, tt.argument)
			}
		})
	}
}

func TestLoadFromStdinResolvesPaths(t *testing.T) {
	data, err := os.ReadFile("testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), Options{ManifestPath: "-", Stdin: strings.NewReader(string(data))})
	if err != nil {
		t.Fatal(err)
	}
	key := res.Cluster.ControlPlane.Hosts[0].SSHPrivateKeyFile
	if !filepath.IsAbs(key) {
		t.Errorf("sshPrivateKeyFile %q was not made absolute", key)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestPrintedManifestsLoad: what `config print` and `config print --full` write must load.
func TestPrintedManifestsLoad(t *testing.T) {
	for name, doc := range map[string]string{"minimal": v1beta1.Minimal(), "full": v1beta1.Reference()} {
		t.Run(name, func(t *testing.T) {
			res, err := Load(context.Background(), Options{ManifestPath: "-", Stdin: strings.NewReader(doc)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("warnings: %v", res.Warnings)
			}
		})
	}
}

// TestStarters: every manifest slipway init writes loads and validates without a warning, the
// OpenStack one with the outputs of the Terraform example it is written with (the shape of
// examples/openstack-tf-output.json).
func TestStarters(t *testing.T) {
	for _, shape := range v1beta1.Shapes {
		t.Run(shape, func(t *testing.T) {
			m, ok := v1beta1.Starter(shape)
			if !ok || !strings.HasPrefix(m, "# ") {
				t.Fatalf("no commented starter for %s", shape)
			}
			opts := Options{ManifestPath: "-", Stdin: strings.NewReader(m)}
			if shape == v1beta1.ShapeOpenStack {
				opts.TerraformSource = "../../examples/openstack-tf-output.json"
			}
			res, err := Load(context.Background(), opts)
			if err != nil {
				t.Fatalf("the %s starter does not load: %v", shape, err)
			}
			for _, w := range res.Warnings {
				t.Errorf("the %s starter has a warning: %s", shape, w)
			}
			if shape == v1beta1.ShapeOpenStack && (len(res.Cluster.Workers) != 1 || res.Cluster.CloudProvider.OpenStack == nil) {
				t.Errorf("the OpenStack starter has %d pools, cloud %+v", len(res.Cluster.Workers), res.Cluster.CloudProvider)
			}
		})
	}
	if _, ok := v1beta1.Starter("aws"); ok {
		t.Error("a starter for aws")
	}
}
