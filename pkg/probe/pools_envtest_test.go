package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/workers"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestPoolStates reads a MachineDeployment's status from a real apiserver: one Machine short
// of Ready is not settled, every replica updated and Ready is, and a status older than the
// spec (observedGeneration) is not.
func TestPoolStates(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw := []byte(`{"cloudProvider": "openstack", "operatingSystem": "ubuntu", "cloudProviderSpec": {"image": "ubuntu-24.04", "flavor": "m1.small", "network": "private"}}`)
	md := envtest.MachineDeployment(workers.Namespace, "probe-pool", map[string]string{"pool": "probe-pool"}, 2, 1, raw)
	if err := env.Client.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), md) })
	for _, tt := range []struct {
		name   string
		status v1alpha1.MachineDeploymentStatus
		want   plan.PoolState
	}{
		{"one short of Ready", v1alpha1.MachineDeploymentStatus{ObservedGeneration: md.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1},
			plan.PoolState{Replicas: 2, Ready: 1}},
		{"every replica updated and Ready", v1alpha1.MachineDeploymentStatus{ObservedGeneration: md.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2},
			plan.PoolState{Replicas: 2, Ready: 2, Settled: true}},
		{"a status of an older spec", v1alpha1.MachineDeploymentStatus{ObservedGeneration: md.Generation - 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2},
			plan.PoolState{Replicas: 2, Ready: 2}},
	} {
		md.Status = tt.status
		if err := env.Client.Status().Update(ctx, md); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, err := PoolStates(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		g := got["probe-pool"]
		if !json.Valid(g.Object) || !bytes.Contains(g.Object, []byte(`"name":"probe-pool"`)) {
			t.Errorf("%s: the live object is not there: %q", tt.name, g.Object)
		}
		g.Object = nil
		if !reflect.DeepEqual(g, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, g, tt.want)
		}
	}
}
