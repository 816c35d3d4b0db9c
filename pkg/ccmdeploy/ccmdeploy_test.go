package ccmdeploy

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/test/golden"
)

const password = "pa;ss #\"word\\" // characters that gcfg would cut or misread unquoted

func creds(kv ...string) map[string]string {
	m := map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin", "OS_PASSWORD": password,
		"OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_NAME": "demo", "OS_PROJECT_DOMAIN_NAME": "Default", "OS_REGION_NAME": "RegionOne",
		// Read by the machine-controller only.
		"SLIPWAY_ALLOW_MACHINE_CLOUD": "false"}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func cluster(reg *v1beta1.RegistryConfiguration) *v1beta1.Cluster {
	return &v1beta1.Cluster{Name: "prod", RegistryConfiguration: reg,
		CloudProvider: v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}}
}

// TestGolden renders a cluster under overwriteRegistry with a CA, into testdata/render.golden
// (every object, as applied) and testdata/cloud.conf.golden (the Secret's cloud.conf, decoded).
func TestGolden(t *testing.T) {
	objs, err := Render(cluster(&v1beta1.RegistryConfiguration{OverwriteRegistry: "registry.example.com:5000"}),
		creds("OS_CACERT", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("---\n")
		all.Write(b)
	}
	conf := secretData(t, objs)[ConfigFile]
	golden.Check(t, filepath.Join("testdata", "render.golden"), all.Bytes())
	golden.Check(t, filepath.Join("testdata", "cloud.conf.golden"), conf)
}

func secretData(t *testing.T, objs []*unstructured.Unstructured) map[string][]byte {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetName() == ConfigSecret {
			d, _, _ := unstructured.NestedStringMap(o.Object, "data")
			out := map[string][]byte{}
			for k, v := range d {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					t.Fatal(err)
				}
				out[k] = b
			}
			return out
		}
	}
	t.Fatal("no Secret rendered")
	return nil
}

func TestCloudConfig(t *testing.T) {
	tests := []struct {
		name     string
		creds    map[string]string
		want     []string // lines cloud.conf must hold
		wantNot  []string
		wantCA   bool
		wantErr  string
		errNotIn string
	}{
		{name: "password", creds: creds(), want: []string{"[Global]", `auth-url = "https://keystone.example:5000/v3"`,
			`username = "admin"`, `password = "pa;ss #\"word\\"`, `user-domain-name = "Default"`, `tenant-name = "demo"`,
			`tenant-domain-name = "Default"`, `region = "RegionOne"`}, wantNot: []string{"ca-file", "SLIPWAY", "application-credential"}},
		{name: "application credential", creds: map[string]string{"OS_AUTH_URL": "https://k/v3", "OS_APPLICATION_CREDENTIAL_ID": "id1",
			"OS_APPLICATION_CREDENTIAL_SECRET": "s3"}, want: []string{`application-credential-id = "id1"`, `application-credential-secret = "s3"`},
			wantNot: []string{"username", "password"}},
		{name: "project by ID and the user's domain by DOMAIN_NAME", creds: map[string]string{"OS_AUTH_URL": "https://k/v3", "OS_USERNAME": "u",
			"OS_PASSWORD": "p", "OS_PROJECT_ID": "0123", "OS_DOMAIN_NAME": "d"}, want: []string{`tenant-id = "0123"`, `domain-name = "d"`}},
		{name: "CA", creds: creds("OS_CACERT", "PEM"), want: []string{`ca-file = "/etc/kubernetes/cloud/ca.crt"`}, wantCA: true},
		{name: "a line break in a value", creds: creds("OS_PASSWORD", "first\nsecond"), wantErr: "OS_PASSWORD: holds a control character", errNotIn: "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := CloudConfig(tt.creds)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), tt.errNotIn) {
					t.Fatalf("got %v, want %q without the value", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data[ConfigFile]), "\n")
			for _, w := range tt.want {
				if !contains(lines, w) {
					t.Errorf("cloud.conf lacks the line %s:\n%s", w, data[ConfigFile])
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(string(data[ConfigFile]), w) {
					t.Errorf("cloud.conf holds %q:\n%s", w, data[ConfigFile])
				}
			}
			if _, ok := data[CAFile]; ok != tt.wantCA || (ok && string(data[CAFile]) != tt.creds["OS_CACERT"]) {
				t.Errorf("ca.crt %q, want it %v with OS_CACERT's PEM", data[CAFile], tt.wantCA)
			}
		})
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

// TestRenderImageAndName: the DaemonSet runs upstream's reference (the image `make image` builds),
// rewritten by overwriteRegistry, with the cluster's name, and mounts the Secret Render makes.
func TestRenderImageAndName(t *testing.T) {
	for _, tt := range []struct {
		reg  *v1beta1.RegistryConfiguration
		want string
	}{
		{nil, "registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.34.1"},
		{&v1beta1.RegistryConfiguration{OverwriteRegistry: "mirror.example.com"}, "mirror.example.com/provider-os/openstack-cloud-controller-manager:v1.34.1"},
	} {
		objs, err := Render(cluster(tt.reg), creds())
		if err != nil {
			t.Fatal(err)
		}
		var ds *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "DaemonSet" {
				ds = o
			}
		}
		if ds == nil {
			t.Fatal("no DaemonSet rendered")
		}
		ctrs, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
		ctr := ctrs[0].(map[string]any)
		args, _, _ := unstructured.NestedStringSlice(ctr, "args")
		if ctr["image"] != tt.want || !contains(args, "--cluster-name=prod") || !contains(args, "--cloud-config="+ConfigDir+"/"+ConfigFile) {
			t.Errorf("image %v args %v; want %s with --cluster-name=prod", ctr["image"], args, tt.want)
		}
		vols, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "volumes")
		if name, _, _ := unstructured.NestedString(vols[0].(map[string]any), "secret", "secretName"); name != ConfigSecret {
			t.Errorf("the DaemonSet mounts Secret %q, want %q", name, ConfigSecret)
		}
	}
}

func TestWanted(t *testing.T) {
	if !Wanted(cluster(nil)) {
		t.Error("openstack with external: not wanted")
	}
	if Wanted(&v1beta1.Cluster{CloudProvider: v1beta1.CloudProvider{None: &v1beta1.NoneCloud{}}}) {
		t.Error("none: wanted")
	}
}
