package webhook_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller"
	admission "github.com/slipway-dev/slipway/pkg/webhook"
	"github.com/slipway-dev/slipway/pkg/webhook/certs"
	"github.com/slipway-dev/slipway/test/envtest"
)

// TestCertificateRenewedBeforeExpiry runs a webhook whose certificate lives 36 seconds, served
// by a real webhook server that the real API server calls, with the Rotator renewing it and a
// stand-in kubelet copying the Secret into the server's certificate directory. For over a
// minute, through at least two renewals, every admission request must reach the webhook and be
// answered: none may fail on an expired or untrusted certificate.
func TestCertificateRenewedBeforeExpiry(t *testing.T) {
	env := envtest.Get(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.Namespace(t)
	const lifetime = 36 * time.Second

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	now := time.Now()
	first, err := certs.New(now.Add(-time.Second), now.Add(lifetime-time.Second), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook-tls"},
		Data: map[string][]byte{"ca.crt": first.CA, "tls.crt": first.Cert, "tls.key": first.Key}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mounts := 0
	// What the kubelet does with a mounted Secret: write the keys into a new directory, then
	// swap the ..data link to it, so that readers see either all old or all new files.
	mount := func(s *corev1.Secret) {
		mounts++
		data := fmt.Sprintf("..%d", mounts)
		if err := os.Mkdir(filepath.Join(dir, data), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"tls.key", "tls.crt"} {
			if err := os.WriteFile(filepath.Join(dir, data, k), s.Data[k], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(data, filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if mounts == 1 {
			for _, k := range []string{"tls.key", "tls.crt"} {
				if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	mount(secret)

	// The webhook refuses, for every user, a Machine that comes with a providerID; the
	// environment's own webhook accepts it from the controller. A 422 saying so proves this
	// webhook answered.
	name := "rotation-" + ns
	fail, none, path := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, admission.ValidateMachinePath
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "machines.rotation.test", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none, FailurePolicy: &fail,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: first.CA,
				URL: ptr("https://127.0.0.1:" + strconv.Itoa(port) + path)},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"cluster.k8s.io"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"machines"}}}},
		}}}
	if err := env.Client.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), hook) })

	scheme, _ := controller.Scheme()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: crwebhook.NewServer(crwebhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})})
	if err != nil {
		t.Fatal(err)
	}
	if err := admission.Setup(mgr, admission.Options{}); err != nil {
		t.Fatal(err)
	}
	rotator := &admission.Rotator{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Secret: types.NamespacedName{Namespace: ns, Name: secret.Name}, Validating: []string{name}, Interval: 200 * time.Millisecond}
	if err := mgr.Add(rotator); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); <-done }()

	ctrlClient := controllerClient(t, env)
	served := map[string]bool{}
	deadline := time.Now().Add(2*lifetime - lifetime/3 + 5*time.Second)
	for time.Now().Before(deadline) {
		cur := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(secret), cur); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cur.Data["tls.crt"], secret.Data["tls.crt"]) {
			mount(cur)
			secret = cur
		}
		served[string(cur.Data["tls.crt"])] = true
		m := &v1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{GenerateName: "m-", Namespace: ns}, Spec: validSpec()}
		m.Spec.ProviderID = ptr("openstack:///x")
		err := ctrlClient.Create(ctx, m, client.DryRunAll)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "written only by the machine-controller") {
			t.Fatalf("after %d certificates, admission did not answer through the webhook: %v", len(served), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(served) < 3 {
		t.Fatalf("%d certificates in %s; want the first and two renewals", len(served), 2*lifetime)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(hook), hook); err != nil {
		t.Fatal(err)
	}
	bundle := hook.Webhooks[0].ClientConfig.CABundle
	if n := bytes.Count(bundle, []byte("BEGIN CERTIFICATE")); n > 2 || !bytes.Contains(bundle, bytes.TrimSpace(secret.Data["ca.crt"])) {
		t.Fatalf("the caBundle holds %d CAs and %s the one in use; want at most the old and the new one", n,
			map[bool]string{true: "includes", false: "not"}[bytes.Contains(bundle, bytes.TrimSpace(secret.Data["ca.crt"]))])
	}
	if b, _ := pem.Decode(secret.Data["tls.crt"]); b == nil {
		t.Fatal("the renewed certificate is not PEM")
	}
}
