package mcdeploy

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func TestRender(t *testing.T) {
	c := &v1beta1.Cluster{Name: "prod", MachineController: v1beta1.MachineController{Image: "registry.example.com/mc:v1"},
		CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true},
		Assets:        v1beta1.Assets{Packages: &v1beta1.PackageAssets{BaseURL: "https://pkgs.example.com"}}}
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
			if ctr["image"] != "registry.example.com/mc:v1" || !strings.Contains(args, "--cluster-name=prod") {
				t.Errorf("deployment container %v", ctr)
			}
			// What pool machines are set up with comes from the node settings Secret.
			if strings.Contains(args, "--package-repository") || strings.Contains(args, "--external-cloud-provider") {
				t.Errorf("node settings passed as flags: %s", args)
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
	w, err := NewWebhookCerts(time.Now()) // any certificate will do as a CA bundle
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile, notPEM := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(caFile, w.CA, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notPEM, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	pw := func(kv ...string) map[string]string {
		m := map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "a", "OS_PASSWORD": "secret", "OS_PROJECT_NAME": "p"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		vars    map[string]string
		wantErr string
	}{
		{"password", pw(), ""},
		{"application credential", map[string]string{"OS_AUTH_URL": "https://k/v3", "OS_APPLICATION_CREDENTIAL_ID": "i", "OS_APPLICATION_CREDENTIAL_SECRET": "secret"}, ""},
		{"nothing", map[string]string{}, "missing OS_AUTH_URL, OS_PASSWORD, OS_PROJECT_NAME or OS_PROJECT_ID, OS_USERNAME"},
		{"mixed", map[string]string{"OS_AUTH_URL": "https://k/v3", "OS_APPLICATION_CREDENTIAL_ID": "i", "OS_APPLICATION_CREDENTIAL_SECRET": "s", "OS_USERNAME": "a"}, "set one"},
		{"http Keystone", pw("OS_AUTH_URL", "http://keystone.example:5000/v3"), "SLIPWAY_ALLOW_HTTP=true"},
		{"http Keystone accepted", pw("OS_AUTH_URL", "http://keystone.example:5000/v3", "SLIPWAY_ALLOW_HTTP", "true"), ""},
		{"Machines may choose their cloud", pw("SLIPWAY_ALLOW_MACHINE_CLOUD", "true"), ""},
		{"not a boolean", pw("SLIPWAY_ALLOW_MACHINE_CLOUD", "yes please"), "must be true or false"},
		{"CA file", pw("OS_CACERT", caFile), ""},
		{"CA file that is no certificate", pw("OS_CACERT", notPEM), "holds no PEM certificate"},
		{"CA file missing", pw("OS_CACERT", filepath.Join(dir, "nope")), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Credentials(env(tt.vars))
			if tt.wantErr == "" && (err != nil || len(got) != len(tt.vars)) {
				t.Fatalf("got %v, %v", got, err)
			}
			if ca := tt.vars["OS_CACERT"]; ca != "" && err == nil && got["OS_CACERT"] != string(w.CA) {
				t.Errorf("OS_CACERT carries %q, want the file's PEM content", got["OS_CACERT"])
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
	if !w.Fresh(now) || !w.Fresh(now.Add(certValidity/2)) {
		t.Fatal("new certificates are not fresh")
	}
	if w.Fresh(now.Add(certValidity * 3 / 4)) {
		t.Error("certificates with less than a third of their lifetime left must be renewed")
	}
	b, _ := pem.Decode(w.Cert)
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := w.ParseCA()
	if err != nil {
		t.Fatal(err)
	}
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

// TestRenderImage: the Deployment runs the default image (rewritten by overwriteRegistry) or the
// manifest's, and only on control planes when the image comes from an archive that apply
// imports there.
func TestRenderImage(t *testing.T) {
	tests := []struct {
		name             string
		mc               v1beta1.MachineController
		registry         *v1beta1.RegistryConfiguration
		wantImage        string
		wantControlPlane bool
	}{
		{name: "default", wantImage: "ghcr.io/slipway-dev/machine-controller:v1.2.3"},
		{name: "default under overwriteRegistry", registry: &v1beta1.RegistryConfiguration{OverwriteRegistry: "registry.example.com:5000"},
			wantImage: "registry.example.com:5000/slipway-dev/machine-controller:v1.2.3"},
		{name: "the manifest's image", mc: v1beta1.MachineController{Image: "registry.example.com/mc:v1"}, wantImage: "registry.example.com/mc:v1"},
		{name: "from an image archive", mc: v1beta1.MachineController{ImageArchive: "/tmp/slipway-images.tar"},
			wantImage: "ghcr.io/slipway-dev/machine-controller:v1.2.3", wantControlPlane: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1beta1.Cluster{Name: "prod", MachineController: tt.mc, RegistryConfiguration: tt.registry}
			v1beta1.SetDefaults(c, "v1.2.3")
			objs, err := Render(c, []byte("CA"))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.GetKind() != "Deployment" {
					continue
				}
				ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				if img := ctrs[0].(map[string]any)["image"]; img != tt.wantImage {
					t.Errorf("image %v, want %s", img, tt.wantImage)
				}
				sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "spec", "nodeSelector")
				if _, cp := sel["node-role.kubernetes.io/control-plane"]; cp != tt.wantControlPlane {
					t.Errorf("nodeSelector %v; want control planes only: %v", sel, tt.wantControlPlane)
				}
				return
			}
			t.Fatal("no Deployment rendered")
		})
	}
}
