package mcdeploy

import (
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func TestRender(t *testing.T) {
	c := &v1beta1.Cluster{Name: "prod", MachineController: v1beta1.MachineController{Image: "registry.example.com/mc:v1"},
		Assets: v1beta1.Assets{Packages: &v1beta1.PackageAssets{BaseURL: "https://pkgs.example.com"}}}
	objs, err := Render(c, []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].GetKind() != "CustomResourceDefinition" {
		t.Errorf("CRDs must come first, got %s", objs[0].GetKind())
	}
	var sawDeploy, sawHook bool
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			sawDeploy = true
			ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			ctr := ctrs[0].(map[string]any)
			args := strings.Join(toStrings(ctr["args"]), " ")
			if ctr["image"] != "registry.example.com/mc:v1" || !strings.Contains(args, "--cluster-name=prod") || !strings.Contains(args, "--package-repository=https://pkgs.example.com") {
				t.Errorf("deployment container %v", ctr)
			}
			if ctr["envFrom"] == nil {
				t.Error("the credentials Secret is not referenced")
			}
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			sawHook = true
			hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, h := range hooks {
				cc := h.(map[string]any)["clientConfig"].(map[string]any)
				if cc["caBundle"] != base64.StdEncoding.EncodeToString([]byte("CA")) {
					t.Errorf("caBundle not set in %s", o.GetName())
				}
			}
		}
	}
	if !sawDeploy || !sawHook {
		t.Errorf("deployment %v, webhook %v", sawDeploy, sawHook)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestCredentials(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		vars    map[string]string
		wantErr string
	}{
		{"password", map[string]string{"OS_AUTH_URL": "u", "OS_USERNAME": "a", "OS_PASSWORD": "secret", "OS_PROJECT_NAME": "p"}, ""},
		{"application credential", map[string]string{"OS_AUTH_URL": "u", "OS_APPLICATION_CREDENTIAL_ID": "i", "OS_APPLICATION_CREDENTIAL_SECRET": "secret"}, ""},
		{"nothing", map[string]string{}, "missing OS_AUTH_URL, OS_PASSWORD, OS_PROJECT_NAME or OS_PROJECT_ID, OS_USERNAME"},
		{"mixed", map[string]string{"OS_AUTH_URL": "u", "OS_APPLICATION_CREDENTIAL_ID": "i", "OS_APPLICATION_CREDENTIAL_SECRET": "s", "OS_USERNAME": "a"}, "set one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Credentials(env(tt.vars))
			if tt.wantErr == "" && (err != nil || len(got) != len(tt.vars)) {
				t.Fatalf("got %v, %v", got, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error leaks a value: %v", err)
			}
		})
	}
}

func TestWebhookCerts(t *testing.T) {
	now := time.Now()
	w, err := NewWebhookCerts(now)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh(now) {
		t.Fatal("new certificates are not fresh")
	}
	if w.Fresh(now.Add(certValidity - renewBefore/2)) {
		t.Error("certificates close to expiry must be renewed")
	}
	cert, _ := parse(w.Cert)
	ca, _ := parse(w.CA)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "machine-controller-webhook.kube-system.svc", Roots: pool}); err != nil {
		t.Errorf("serving certificate does not verify for the Service name: %v", err)
	}
	other, _ := NewWebhookCerts(now)
	if (&WebhookCerts{CA: other.CA, Cert: w.Cert, Key: w.Key}).Fresh(now) {
		t.Error("a certificate from another CA counts as fresh")
	}
}
