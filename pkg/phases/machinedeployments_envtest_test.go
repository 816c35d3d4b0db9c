package phases

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/probe"
	"github.com/slipway-dev/slipway/pkg/workers"
	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestUpgradeMachineDeployments runs --upgrade-machine-deployments against a real apiserver
// with the machine-controller's CRDs and admission: a pool from the manifest and a pool someone
// created by hand, both at the previous minor. Without the flag both keep their version; with
// it both get the new one, and the hand-made pool keeps every other field it had.
func TestUpgradeMachineDeployments(t *testing.T) {
	env := envtest.Get(t)
	ctx := context.Background()
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	root := env.Root
	res, err := config.Load(ctx, config.Options{
		ManifestPath:    filepath.Join(root, "examples", "openstack.yaml"),
		TerraformSource: filepath.Join(root, "examples", "openstack-tf-output.json"),
		ImageTag:        "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cluster
	c.Versions.Kubernetes = "v1.35.4"
	old, err := workers.MachineDeployments(c)
	if err != nil || len(old) == 0 {
		t.Fatalf("the example has no worker pools: %v", err)
	}
	data, err := workers.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Apply(ctx, objs); err != nil {
		t.Fatalf("creating the manifest's pools at 1.35.4: %v", err)
	}
	handMade := objs[0].DeepCopy()
	handMade.SetName("hand-made")
	handMade.SetResourceVersion("")
	if err := unstructured.SetNestedField(handMade.Object, int64(7), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := kc.ApplyAs(ctx, "kubectl", []*unstructured.Unstructured{handMade}); err != nil {
		t.Fatalf("creating a pool by hand: %v", err)
	}
	// A pool slipway applied once, since dropped from the manifest: slipway's field manager owns
	// its fields, so a kubelet bump under that manager would take them away.
	dropped := objs[0].DeepCopy()
	dropped.SetName("dropped")
	if err := unstructured.SetNestedField(dropped.Object, int64(5), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := kc.Apply(ctx, []*unstructured.Unstructured{dropped}); err != nil {
		t.Fatalf("creating a pool as slipway: %v", err)
	}
	declared := old[0].Name
	t.Cleanup(func() {
		gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
		for _, n := range []string{declared, "hand-made", "dropped"} {
			_ = kc.Dynamic.Resource(gvr).Namespace(workers.Namespace).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	run := func(upgrade bool) map[string]string {
		t.Helper()
		c.Versions.Kubernetes = "v1.36.3"
		mds, err := workers.MachineDeployments(c)
		if err != nil {
			t.Fatal(err)
		}
		existing, err := probe.MachineDeploymentKubelets(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		_, undeclared := workers.PinKubelet(mds, existing, c.Versions.Kubernetes, upgrade)
		data, err := workers.Marshal(mds)
		if err != nil {
			t.Fatal(err)
		}
		r := &clientRun{kc: kc, rendered: Rendered{MachineDeployments: data, KubeletBumps: workers.KubeletBumps(undeclared, c.Versions.Kubernetes)}}
		if err := applyMachineDeployments(ctx, r); err != nil {
			t.Fatalf("applying (upgrade=%t): %v", upgrade, err)
		}
		after, err := probe.MachineDeploymentKubelets(ctx, kc)
		if err != nil {
			t.Fatal(err)
		}
		return after
	}

	if got := run(false); got[declared] != "1.35.4" || got["hand-made"] != "1.35.4" || got["dropped"] != "1.35.4" {
		t.Errorf("without the flag: versions %v; want every pool kept at 1.35.4", got)
	}
	if got := run(true); got[declared] != "1.36.3" || got["hand-made"] != "1.36.3" || got["dropped"] != "1.36.3" {
		t.Errorf("with the flag: versions %v; want every pool at 1.36.3", got)
	}
	gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
	for name, want := range map[string]int64{"hand-made": 7, "dropped": 5} {
		md, err := kc.Dynamic.Resource(gvr).Namespace(workers.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		replicas, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
		flavor, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "providerSpec", "value", "cloudProviderSpec", "flavor")
		if replicas != want || flavor == "" {
			t.Errorf("pool %s lost fields to the kubelet bump: replicas %d (want %d), flavor %q", name, replicas, want, flavor)
		}
	}
}

// clientRun is the part of a run that the cluster-wide phases read, over a client of the test's
// own apiserver.
type clientRun struct {
	kc       *kube.Client
	rendered Rendered
}

func (r *clientRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *clientRun) Rendered() Rendered                         { return r.rendered }
func (r *clientRun) Logf(string, string, ...any)                {}
