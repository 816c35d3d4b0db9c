package phases

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The cloud-controller-manager phase installs the OpenStack cloud-controller-manager (its
// cloud.conf Secret from the OS_* credentials, RBAC and DaemonSet on the control planes), waits
// until every control plane runs it, and records the hash the plan compared.
var _ = register(Phase{
	Name:  plan.StepCloudController,
	Short: "deploy the OpenStack cloud-controller-manager with its cloud.conf from the OS_* credentials",
	Run:   func(ctx context.Context, r *Run, _ string) error { return deployCloudController(ctx, r) },
})

// cloudControllerRun is what deploying the cloud-controller-manager reads of a run.
type cloudControllerRun interface {
	api
	logger
	Rendered() Rendered
	hide(values ...string)
}

func deployCloudController(ctx context.Context, r cloudControllerRun) error {
	rendered := r.Rendered()
	// An error from the API server may quote what it was sent.
	r.hide(rendered.CloudControllerSecrets...)
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	if err := c.Apply(ctx, rendered.CloudController); err != nil {
		return err
	}
	err = kube.Wait(ctx, "the OpenStack cloud-controller-manager to run on every control plane", 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		ds, err := c.Kube.AppsV1().DaemonSets(ccmdeploy.Namespace).Get(ctx, ccmdeploy.DaemonSet, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		s := ds.Status
		return ds.Generation == s.ObservedGeneration && s.DesiredNumberScheduled > 0 &&
				s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled,
			fmt.Sprintf("%d available, %d updated of %d", s.NumberAvailable, s.UpdatedNumberScheduled, s.DesiredNumberScheduled), nil
	})
	if err != nil {
		return err
	}
	r.Logf("", "the OpenStack cloud-controller-manager is running")
	return applied.Record(ctx, c, "cloud-controller-manager", rendered.CloudControllerHash)
}
