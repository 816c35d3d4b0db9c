package terraform

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/slipway-dev/slipway/pkg/config"
)

// Paths of the documented example, relative to this package.
const (
	exampleManifest = "../../examples/openstack.yaml"
	exampleOutput   = "../../examples/openstack-tf-output.json"
)

// checkExample runs the README's quick start on the real outputs: the example manifest with
// `-t <dir>` loads, merges and validates as apply loads it, worker pools included as the
// machine-controller checks them, with the control plane reached at its private addresses
// through the bastion. And examples/openstack-tf-output.json, which the README's `config
// machinedeployments` example and the unit tests read, has the types terraform/openstack
// really prints, output by output, so that it cannot drift from output.tf.
func checkExample(ctx context.Context, t *testing.T, tf *tfexec.Terraform, dir string) {
	t.Helper()
	res, err := config.Load(ctx, config.Options{ManifestPath: exampleManifest, TerraformSource: dir, ImageTag: "test"})
	if err != nil {
		t.Fatalf("the quick start's manifest with the real outputs: %v", err)
	}
	c := res.Cluster
	if len(c.ControlPlane.Hosts) != 3 || len(c.Workers) != 1 || c.Workers[0].Name != "pool1" {
		t.Errorf("control plane %d hosts, pools %+v; want 3 hosts and pool1", len(c.ControlPlane.Hosts), c.Workers)
	}
	for _, h := range c.ControlPlane.Hosts {
		if h.Bastion == nil || h.PublicAddress != h.PrivateAddress {
			t.Errorf("host %s (private %s, bastion %+v): want its private address, dialled through the bastion", h.PublicAddress, h.PrivateAddress, h.Bastion)
		}
	}

	outputs, err := tf.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exampleOutput)
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]struct {
		Type json.RawMessage `json:"type"`
	}
	if err := json.Unmarshal(data, &example); err != nil {
		t.Fatalf("%s: %v", exampleOutput, err)
	}
	for name, meta := range outputs {
		if !strings.HasPrefix(name, "slipway_") {
			continue
		}
		var got, want any
		if err := json.Unmarshal(meta.Type, &got); err != nil {
			t.Fatal(err)
		}
		ex, ok := example[name]
		if ok {
			_ = json.Unmarshal(ex.Type, &want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s's type in %s is %s, but terraform/openstack prints %s", name, exampleOutput, ex.Type, meta.Type)
		}
	}
	for name := range example {
		if _, ok := outputs[name]; strings.HasPrefix(name, "slipway_") && !ok {
			t.Errorf("%s has %s, which terraform/openstack does not print", exampleOutput, name)
		}
	}
}
