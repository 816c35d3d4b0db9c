package addons_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Main(m)) }

// TestAPIServerAccepts server-side applies every rendered manifest to a real kube-apiserver
// 1.34 with strict field validation, so that a misspelt or misplaced field fails here rather
// than on a cluster. CRDs must become Established.
func TestAPIServerAccepts(t *testing.T) {
	env := envtest.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range clusters {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, name))
			for _, o := range objs {
				err := env.Client.Patch(ctx, o, client.Apply, client.FieldOwner("slipway-test"), client.ForceOwnership,
					client.FieldValidation("Strict"))
				if err != nil {
					t.Fatalf("applying %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
				if o.GetKind() == "CustomResourceDefinition" {
					waitEstablished(ctx, t, env, o)
				}
			}
		})
	}
}

// TestAPIServerRejectsUnknownFields shows that the check above can fail: the same apply with a
// field the API does not know is refused.
func TestAPIServerRejectsUnknownFields(t *testing.T) {
	env := envtest.Get(t)
	for _, o := range decode(t, render(t, "flannel")) {
		if o.GetKind() != "DaemonSet" {
			continue
		}
		if err := unstructured.SetNestedField(o.Object, "x", "spec", "template", "spec", "hostNetworking"); err != nil {
			t.Fatal(err)
		}
		err := env.Client.Patch(context.Background(), o, client.Apply, client.FieldOwner("slipway-test"), client.ForceOwnership,
			client.FieldValidation("Strict"), client.DryRunAll)
		if err == nil {
			t.Fatal("the API server accepted a DaemonSet with an unknown field")
		}
		return
	}
	t.Fatal("no DaemonSet in the flannel manifest")
}

func waitEstablished(ctx context.Context, t *testing.T, env *envtest.Env, o *unstructured.Unstructured) {
	t.Helper()
	envtest.Eventually(t, 30*time.Second, "CRD "+o.GetName()+" to be Established", func() (bool, string) {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(o.GroupVersionKind())
		if err := env.Client.Get(ctx, types.NamespacedName{Name: o.GetName()}, crd); err != nil {
			return false, err.Error()
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %v", conditions)
	})
}
