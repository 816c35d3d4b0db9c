package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/workers"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestPoolReplicasAndDrift runs apply's pool path (probe, Desire, plan, server-side apply) against
// a real apiserver with the machine-controller's CRDs and admission, for two pools: "sized" with
// autoscaler bounds and "fixed" without. Scaled through the scale subresource as the
// cluster-autoscaler does, "sized" keeps the autoscaler's count through re-applies, even when
// the manifest's replicas changes, and the plan says why; "fixed" scaled by hand and its flavor
// edited by hand is drift that the plan names and apply reverts.
func TestPoolReplicasAndDrift(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	res, err := config.Load(ctx, config.Options{
		ManifestPath:    filepath.Join(env.Root, "examples", "openstack.yaml"),
		TerraformSource: filepath.Join(env.Root, "examples", "openstack-tf-output.json"),
		ImageTag:        "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cluster
	if len(c.Workers) == 0 {
		t.Fatal("the example has no worker pools")
	}
	sized, fixed := c.Workers[0], c.Workers[0]
	two := int32(2)
	sized.Name, sized.Replicas, sized.Autoscaler = "drift-sized", &two, &v1beta1.Autoscaler{Min: 1, Max: 5}
	fixed.Name, fixed.Replicas, fixed.Autoscaler = "drift-fixed", &two, nil
	c.Workers = []v1beta1.WorkerPool{sized, fixed}
	gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
	mds := kc.Dynamic.Resource(gvr).Namespace(workers.Namespace)
	t.Cleanup(func() {
		for _, n := range []string{sized.Name, fixed.Name} {
			_ = mds.Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	// round probes the pools, renders the manifest as apply does and plans; apply sends the
	// rendered MachineDeployments as the machine-deployments phase does.
	round := func(apply bool) *plan.Plan {
		t.Helper()
		pools, err := probe.PoolStates(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		o := &probe.Observed{State: plan.Observed{Cluster: plan.ClusterState{Pools: pools}}}
		d, err := Desire(c, &Inputs{}, o, false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(d.Plan, o.State)
		if err != nil {
			t.Fatal(err)
		}
		if apply {
			objs, err := kube.Decode(d.Rendered.MachineDeployments)
			if err != nil {
				t.Fatal(err)
			}
			if err := kc.Apply(ctx, objs); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	replicas := func(name string) int64 {
		t.Helper()
		u, err := mds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n
	}
	// scale sets replicas through the scale subresource under manager, as the cluster-autoscaler
	// and kubectl scale do.
	scale := func(name, manager string, n int32) {
		t.Helper()
		s := &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workers.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mds.Update(ctx, &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{FieldManager: manager}, "scale"); err != nil {
			t.Fatalf("scaling %s to %d: %v", name, n, err)
		}
	}
	changes := func(p *plan.Plan) string {
		var out []string
		for _, ch := range p.Pools {
			out = append(out, ch.String())
		}
		return strings.Join(out, "\n")
	}

	round(true)
	if a, b := replicas(sized.Name), replicas(fixed.Name); a != 2 || b != 2 {
		t.Fatalf("created with replicas %d and %d, want the manifest's 2 and 2", a, b)
	}
	if p := round(true); len(p.Pools) != 0 || replicas(sized.Name) != 2 {
		t.Fatalf("a re-apply of what was applied: changes %q, replicas of %s %d; want none and 2 (admission keeps the count apply leaves out)",
			changes(p), sized.Name, replicas(sized.Name))
	}

	scale(sized.Name, "cluster-autoscaler", 4)
	p := round(false)
	if got, want := changes(p), sized.Name+": replicas 4, the manifest says 2 (kept: "; !strings.HasPrefix(got, want) {
		t.Errorf("the plan after the autoscaler scaled: %q, want it to start %q", got, want)
	}
	round(true)
	if n := replicas(sized.Name); n != 4 {
		t.Fatalf("apply set the autoscaler's pool from 4 to %d replicas", n)
	}
	three := int32(3)
	c.Workers[0].Replicas = &three // the manifest's size at creation changes: still not the live count
	round(true)
	if n := replicas(sized.Name); n != 4 {
		t.Fatalf("apply with the manifest's replicas changed set the autoscaler's pool from 4 to %d", n)
	}

	scale(fixed.Name, "kubectl", 5)
	u, err := mds.Get(ctx, fixed.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, "m1.tiny", "spec", "template", "spec", "providerSpec", "value", "cloudProviderSpec", "flavor"); err != nil {
		t.Fatal(err)
	}
	if _, err := mds.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	p = round(false)
	flavor := c.Workers[1].ProviderSpec.CloudProviderSpec.Flavor
	for _, want := range []string{
		fixed.Name + ": flavor m1.tiny → " + flavor + " (rolling update of 5 machines)",
		fixed.Name + ": replicas 5 → 2 (scale)",
	} {
		if !strings.Contains(changes(p), want) {
			t.Errorf("the plan after a hand edit: %q, want it to name %q", changes(p), want)
		}
	}
	if i := stepIndex(p, plan.StepMachineDeployment); i < 0 || !strings.Contains(p.Steps[i].Reason, "replicas 5 → 2") {
		t.Errorf("no machine-deployments step naming the drift: %+v", p.Steps)
	}
	round(true)
	if n := replicas(fixed.Name); n != 2 {
		t.Errorf("apply left the hand-scaled pool at %d replicas, want the manifest's 2", n)
	}
	if p := round(false); len(p.Pools) != 1 || p.Pools[0].Action != plan.PoolKept {
		t.Errorf("after apply: changes %q, want only the autoscaler's kept count", changes(p))
	}
}

func stepIndex(p *plan.Plan, name string) int {
	for i, s := range p.Steps {
		if s.Name == name {
			return i
		}
	}
	return -1
}
