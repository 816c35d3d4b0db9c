package webhook

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// Paths the webhooks are served on; manifests/machine-controller/webhook.yaml names the same.
const (
	MutateMachineDeploymentPath   = "/mutate-cluster-k8s-io-v1alpha1-machinedeployment"
	ValidateMachineDeploymentPath = "/validate-cluster-k8s-io-v1alpha1-machinedeployment"
	ValidateMachineSetPath        = "/validate-cluster-k8s-io-v1alpha1-machineset"
	ValidateMachinePath           = "/validate-cluster-k8s-io-v1alpha1-machine"
)

// Setup registers the webhooks with the manager's webhook server.
func Setup(mgr ctrl.Manager, opts Options) error {
	steps := []struct {
		kind string
		err  error
	}{
		{"MachineDeployment", ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.MachineDeployment{}).
			WithDefaulter(machineDeploymentDefaulter{}).WithValidator(machineDeploymentValidator{opts}).Complete()},
		{"MachineSet", ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.MachineSet{}).WithValidator(machineSetValidator{opts}).Complete()},
		{"Machine", ctrl.NewWebhookManagedBy(mgr).For(&v1alpha1.Machine{}).WithValidator(machineValidator{opts}).Complete()},
	}
	for _, s := range steps {
		if s.err != nil {
			return fmt.Errorf("registering the %s webhook: %w", s.kind, s.err)
		}
	}
	return nil
}
