package phases

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/mcdeploy"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The machine-controller phase installs the CRDs and the machine-controller, with its OpenStack
// credentials (from the environment), a webhook certificate (reused while fresh), the node
// settings its machines are set up with (containerd, registries, proxy, asset source) and, apart,
// what of them is secret, for the machines to fetch with their bootstrap tokens, waits
// until its Deployment is available and its admission webhook answers, and records the hash the
// plan compared.
var _ = register(Phase{
	Name:  plan.StepMachineController,
	Short: "deploy the machine-controller with its credentials and webhook certificate",
	Run:   func(ctx context.Context, r *Run, _ string) error { return deployMachineController(ctx, r) },
})

// machineControllerRun is what deploying the machine-controller reads of a run.
type machineControllerRun interface {
	api
	logger
	manifest
	Rendered() Rendered
}

func deployMachineController(ctx context.Context, r machineControllerRun) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	creds, err := mcdeploy.Credentials(os.Getenv)
	if err != nil {
		return err
	}
	certs, err := webhookCerts(ctx, c)
	if err != nil {
		return err
	}
	objs, err := mcdeploy.Render(r.Manifest(), certs.CA)
	if err != nil {
		return err
	}
	settings := r.Rendered().NodeSettings
	if len(settings) == 0 {
		return fmt.Errorf("no node settings were rendered for the machine-controller's machines")
	}
	credData := map[string][]byte{}
	for k, v := range creds {
		credData[k] = []byte(v)
	}
	objs = append([]*unstructured.Unstructured{
		secret(mcdeploy.CredentialsSecret, "Opaque", credData),
		secret(mcdeploy.WebhookTLSSecret, "kubernetes.io/tls", map[string][]byte{"ca.crt": certs.CA, "tls.crt": certs.Cert, "tls.key": certs.Key}),
		secret(bootstrap.SettingsSecret, "Opaque", map[string][]byte{bootstrap.SettingsKey: settings}),
		// Written even when empty: a manifest that dropped its credentials leaves none behind.
		secret(bootstrap.CredentialsSecret, "Opaque", r.Rendered().NodeCredentials),
	}, objs...)
	if err := c.Apply(ctx, objs); err != nil {
		return err
	}
	err = kube.Wait(ctx, "the machine-controller Deployment to be available", 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		d, err := c.Kube.AppsV1().Deployments(mcdeploy.Namespace).Get(ctx, mcdeploy.Deployment, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return d.Status.AvailableReplicas > 0 && d.Status.UpdatedReplicas == d.Status.Replicas,
			fmt.Sprintf("%d available, %d updated of %d", d.Status.AvailableReplicas, d.Status.UpdatedReplicas, d.Status.Replicas), nil
	})
	if err != nil {
		return err
	}
	if err := waitWebhook(ctx, c); err != nil {
		return err
	}
	r.Logf("", "machine-controller %s is running", r.Manifest().MachineController.Image)
	return applied.Record(ctx, c, "machine-controller", r.Rendered().MachineControllerHash)
}

// waitWebhook waits until the API server reaches the machine-controller's admission webhook.
// The Deployment being available is not enough: the webhook Service's endpoints and each node's
// kube-proxy rules follow the pod's readiness by a moment, and until then every MachineDeployment
// the next step applies is refused ("failed calling webhook", seen in the e2e). A server-side dry
// run of a MachineDeployment create goes through the webhooks without storing anything; any
// answer from them, an admission denial included, means they are reachable. The first webhook
// it meets is the controller's defaulting one (mutating webhooks run before validating ones, one
// at a time), so its failure is what the dry run reports while the webhook is unreachable.
func waitWebhook(ctx context.Context, c *kube.Client) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MachineDeployment",
		"metadata": map[string]any{"name": "slipway-webhook-probe", "namespace": mcdeploy.Namespace},
	}}
	mds := c.Dynamic.Resource(v1alpha1.GroupVersion.WithResource("machinedeployments")).Namespace(mcdeploy.Namespace)
	return kube.Wait(ctx, "the machine-controller's admission webhook to answer", 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := mds.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		var answer apierrors.APIStatus
		switch {
		case err == nil:
			return true, "", nil
		case strings.Contains(err.Error(), "failed calling webhook"):
			return false, err.Error(), nil
		case !errors.As(err, &answer):
			// No answer from the API server at all (a broken connection, a timeout): ask again.
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

// webhookCerts reuses the webhook certificate in the cluster while it is fresh.
func webhookCerts(ctx context.Context, c *kube.Client) (*mcdeploy.WebhookCerts, error) {
	s, err := c.Kube.CoreV1().Secrets(mcdeploy.Namespace).Get(ctx, mcdeploy.WebhookTLSSecret, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err == nil {
		w := &mcdeploy.WebhookCerts{CA: s.Data["ca.crt"], Cert: s.Data["tls.crt"], Key: s.Data["tls.key"]}
		if w.Fresh(time.Now()) {
			return w, nil
		}
	}
	return mcdeploy.NewWebhookCerts(time.Now())
}

func secret(name, typ string, data map[string][]byte) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString(v)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": typ,
		"metadata": map[string]any{"name": name, "namespace": mcdeploy.Namespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "slipway"}},
		"data": d,
	}}
}
