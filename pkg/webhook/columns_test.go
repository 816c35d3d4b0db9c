package webhook_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/slipway-dev/slipway/test/envtest"
)

// TestPrinterColumns asks the API server for the tables `kubectl get` prints, and checks the
// columns an operator reads when a pool does not come up.
func TestPrinterColumns(t *testing.T) {
	env := envtest.Get(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for resource, want := range map[string][]string{
		"machinedeployments": {"Name", "Replicas", "Ready", "Available", "Updated", "Kubelet", "Age"},
		"machinesets":        {"Name", "Replicas", "Available", "Ready", "Age"},
		"machines":           {"Name", "Node", "Address", "Phase", "ProviderID", "Age"},
	} {
		t.Run(resource, func(t *testing.T) {
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/cluster.k8s.io/v1alpha1/"+resource).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var table struct {
				Kind              string `json:"kind"`
				ColumnDefinitions []struct {
					Name string `json:"name"`
				} `json:"columnDefinitions"`
			}
			if err := json.Unmarshal(body, &table); err != nil || table.Kind != "Table" {
				t.Fatalf("GET %s as a table: %v, kind %q", resource, err, table.Kind)
			}
			var got []string
			for _, c := range table.ColumnDefinitions {
				got = append(got, c.Name)
			}
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("kubectl get %s has columns %v, lacks %s", resource, got, w)
				}
			}
		})
	}
}
