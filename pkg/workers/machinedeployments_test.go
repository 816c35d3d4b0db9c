package workers_test

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/workers"
	"github.com/slipway-dev/slipway/test/golden"
)

// TestGolden renders the MachineDeployments of example manifests (merged with their Terraform
// output) and compares them with testdata/*.golden.yaml.
func TestGolden(t *testing.T) {
	tests := []struct {
		name, manifest, terraform string
	}{
		{"openstack-example", "../../examples/openstack.yaml", "../../examples/openstack-tf-output.json"},
		{"full-reference", "testdata/full.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := config.Load(context.Background(), config.Options{ManifestPath: tt.manifest, TerraformSource: tt.terraform, ImageTag: "test"})
			if err != nil {
				t.Fatal(err)
			}
			mds, err := workers.MachineDeployments(res.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			got, err := workers.Marshal(mds)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".golden.yaml"), got)
		})
	}
}

// TestShape checks the properties every generated MachineDeployment must have, independent of
// the golden files.
func TestShape(t *testing.T) {
	res, err := config.Load(context.Background(), config.Options{ManifestPath: "testdata/full.yaml", ImageTag: "test"})
	if err != nil {
		t.Fatal(err)
	}
	mds, err := workers.MachineDeployments(res.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(mds) != 2 {
		t.Fatalf("got %d MachineDeployments, want one per pool (2)", len(mds))
	}
	for _, md := range mds {
		if md.Namespace != "kube-system" {
			t.Errorf("%s: namespace %q", md.Name, md.Namespace)
		}
		if md.Spec.Selector.MatchLabels[workers.PoolLabel] != md.Name || md.Spec.Template.Labels[workers.PoolLabel] != md.Name {
			t.Errorf("%s: selector %v does not match template labels %v", md.Name, md.Spec.Selector, md.Spec.Template.Labels)
		}
		if md.Spec.Template.Spec.Versions.Kubelet != "1.36.3" {
			t.Errorf("%s: kubelet %q, want the cluster version without v", md.Name, md.Spec.Template.Spec.Versions.Kubelet)
		}
		pc, err := v1alpha1.DecodeProviderConfig(md.Spec.Template.Spec.ProviderSpec)
		if err != nil || pc.CloudProvider != "openstack" || pc.OperatingSystem == "" {
			t.Errorf("%s: providerSpec %+v, %v", md.Name, pc, err)
		}
		ru := md.Spec.Strategy.RollingUpdate
		if md.Spec.Strategy.Type != v1alpha1.RollingUpdateMachineDeploymentStrategyType || ru.MaxSurge == nil || ru.MaxUnavailable == nil {
			t.Errorf("%s: strategy %+v", md.Name, md.Spec.Strategy)
		}
	}
	if got := *mds[1].Spec.Strategy.RollingUpdate.MaxSurge; got != intstr.FromString("50%") {
		t.Errorf("pool2 maxSurge %v", got)
	}
	if mds[0].Annotations[workers.AutoscalerMinAnnotation] != "1" || mds[0].Annotations[workers.AutoscalerMaxAnnotation] != "5" {
		t.Errorf("autoscaler annotations %v", mds[0].Annotations)
	}
}
