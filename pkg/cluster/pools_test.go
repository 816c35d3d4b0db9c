package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// A manifest without worker pools gets an empty list, not null, and reaches no cluster.
func TestPrintPoolsWithoutPools(t *testing.T) {
	var out bytes.Buffer
	unreachable := func(context.Context) (*kube.Client, error) {
		t.Fatal("printing no pools asked for the cluster")
		return nil, nil
	}
	if err := printPools(context.Background(), unreachable, "kube-system", phases.Rendered{}, &out); err != nil {
		t.Fatal(err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || string(res["pools"]) != "[]" {
		t.Fatalf("printed %s (%v), want {\"pools\": []}", out.String(), err)
	}
}

// TestPrintPools prints, against a real apiserver, a pool that exists (with no Machines: no
// controller runs) and one that does not, in the manifest's order.
func TestPrintPools(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := env.Namespace(t)
	raw := []byte(`{"cloudProvider": "openstack", "operatingSystem": "ubuntu", "cloudProviderSpec": {"image": "ubuntu-24.04", "flavor": "m1.small", "network": "private"}}`)
	if err := env.Client.Create(ctx, envtest.MachineDeployment(ns, "pool-b", map[string]string{"pool": "pool-b"}, 3, 1, raw)); err != nil {
		t.Fatal(err)
	}
	rendered := phases.Rendered{MachineDeployments: []byte("apiVersion: cluster.k8s.io/v1alpha1\nkind: MachineDeployment\nmetadata: {name: pool-b}\n---\n" +
		"apiVersion: cluster.k8s.io/v1alpha1\nkind: MachineDeployment\nmetadata: {name: pool-a}\n")}
	var out bytes.Buffer
	if err := printPools(ctx, func(context.Context) (*kube.Client, error) { return kc, nil }, ns, rendered, &out); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Pools []map[string]any `json:"pools"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Pools) != 2 {
		t.Fatalf("printed %s (%v), want two pools", out.String(), err)
	}
	b, a := res.Pools[0], res.Pools[1]
	if b["name"] != "pool-b" || b["replicas"] != 3.0 || b["ready"] != 0.0 || b["missing"] != nil || len(b["machines"].([]any)) != 0 {
		t.Errorf("the existing pool: %v", b)
	}
	if a["name"] != "pool-a" || a["missing"] != true {
		t.Errorf("the missing pool: %v", a)
	}
}
