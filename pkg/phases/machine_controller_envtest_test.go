package phases

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestWaitWebhook: the wait for the machine-controller's admission webhook returns at once when
// the API server reaches the webhooks of MachineDeployments (here: none is registered), keeps
// waiting while a registered one cannot be called, naming the error, and stores nothing.
func TestWaitWebhook(t *testing.T) {
	env := envtest.Get(t)
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := waitWebhook(ctx, kc); err != nil {
		t.Fatalf("no webhook to wait for, yet: %v", err)
	}

	// A webhook behind a Service with no endpoints, as the machine-controller's is for a moment
	// after its Deployment turns available. It is a mutating one, as the controller's defaulting
	// webhook is: mutating webhooks run first, one at a time, so its failure is the answer. (A
	// validating one would race the environment's own validating webhook, which denies the
	// probe: validating webhooks are called in parallel, and the first verdict wins.)
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	path := "/mutate"
	hooks := kc.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "wait-webhook-test"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "machinedeployments.wait-webhook-test.slipway.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "nowhere", Path: &path}},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{v1alpha1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"machinedeployments"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := hooks.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), cfg.Name, metav1.DeleteOptions{}) })
	// The API server picks up a new webhook configuration a moment after it is stored.
	probe := &v1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "wait-webhook-test", Namespace: "default"}}
	err = kube.Wait(ctx, "the API server to call the new webhook", 30*time.Second, func(ctx context.Context) (bool, string, error) {
		err := env.Client.Create(ctx, probe.DeepCopy(), ctrlclient.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "failed calling webhook"), fmt.Sprint(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = waitWebhook(short, kc)
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("waiting for an unreachable webhook: %v, want an error that names the failed call", err)
	}

	if err := hooks.Delete(ctx, cfg.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitWebhook(ctx, kc); err != nil {
		t.Fatalf("after the webhook is gone: %v", err)
	}
	var mds v1alpha1.MachineDeploymentList
	if err := env.Client.List(ctx, &mds); err != nil {
		t.Fatal(err)
	}
	for _, md := range mds.Items {
		if md.Name == "slipway-webhook-probe" {
			t.Errorf("the dry run stored MachineDeployment %s/%s", md.Namespace, md.Name)
		}
	}
}
