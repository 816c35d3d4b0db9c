package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestPoolsTheControllerRefuses: the README's quick start with the worker pool that
// terraform/openstack once wrote, tagged with a key the machine-controller sets itself, fails
// in every command that loads the cluster, apply among them and before it reaches any host,
// with the field at fault and the config exit code; and the policy those checks use is the one
// apply deploys, from the same environment variables.
func TestPoolsTheControllerRefuses(t *testing.T) {
	write := tempWriter(t)
	// The pool as terraform/openstack wrote it once: tagged with the cluster's name.
	data, err := os.ReadFile("../../examples/openstack-tf-output.json")
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]any
	if err := json.Unmarshal(data, &example); err != nil {
		t.Fatal(err)
	}
	spec := dig(t, example, "slipway_workers", "value", "pool1", "providerSpec", "cloudProviderSpec")
	if _, ok := spec["tags"]; ok {
		t.Fatalf("the example's pool already has tags: %v", spec)
	}
	spec["tags"] = map[string]any{"slipway-cluster": "demo"}
	data, err = json.Marshal(example)
	if err != nil {
		t.Fatal(err)
	}
	tagged := write("tagged.json", string(data))
	manifest := "../../examples/openstack.yaml"
	const want = `workers[0].providerSpec.cloudProviderSpec.tags[slipway-cluster]: Forbidden: slipway-cluster is set by the machine-controller (the machine-controller would refuse pool "pool1" for this)`

	for _, args := range [][]string{
		{"config", "machinedeployments", "-m", manifest, "-t", tagged},
		{"config", "dump", "-m", manifest, "-t", tagged},
		{"config", "images", "-m", manifest, "-t", tagged},
		{"apply", "--dry-run", "-m", manifest, "-t", tagged},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			out, stderr, code := run(t, "", args...)
			if code != ExitConfig || !strings.Contains(stderr, want) || !strings.Contains(stderr, "with terraform output "+tagged+" is invalid") {
				t.Errorf("exit code %d (want %d), stderr:\n%s\nwant %q", code, ExitConfig, stderr, want)
			}
			if out != "" {
				t.Errorf("printed something for a refused pool:\n%s", out)
			}
		})
	}

	t.Run("the example as it is", func(t *testing.T) {
		if _, stderr, code := run(t, "", "config", "machinedeployments", "-m", manifest, "-t", "../../examples/openstack-tf-output.json"); code != ExitOK {
			t.Errorf("exit code %d: %s", code, stderr)
		}
	})
	t.Run("an unreadable policy", func(t *testing.T) {
		t.Setenv("SLIPWAY_ALLOW_MACHINE_CLOUD", "maybe")
		_, stderr, code := run(t, "", "config", "dump", "-m", manifest, "-t", "../../examples/openstack-tf-output.json")
		if code != ExitFailure || !strings.Contains(stderr, `the machine-controller's configuration in the environment: SLIPWAY_ALLOW_MACHINE_CLOUD="maybe": must be true or false`) {
			t.Errorf("exit code %d (want %d), stderr:\n%s", code, ExitFailure, stderr)
		}
	})
}

// dig returns the object at path in a decoded JSON document.
func dig(t *testing.T, doc map[string]any, path ...string) map[string]any {
	t.Helper()
	for _, k := range path {
		next, ok := doc[k].(map[string]any)
		if !ok {
			t.Fatalf("no object %s in the document", k)
		}
		doc = next
	}
	return doc
}
