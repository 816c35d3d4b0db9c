package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/probe"
)

// TestDesireNodeSettings checks what apply writes for the machine-controller's machines: the
// manifest's node settings with the registries' CA files read here and the CNI's pods, what of
// them is secret apart for the machines to fetch, none of it in the plan, and a change to them a
// change of the machine-controller's hash.
func TestDesireNodeSettings(t *testing.T) {
	for k, v := range map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin",
		"OS_PASSWORD": "secret", "OS_PROJECT_NAME": "demo", "OS_REGION_NAME": "RegionOne"} {
		t.Setenv(k, v)
	}
	pemCA := testCert(t, "node-settings-test-ca", time.Now().Add(time.Hour), true)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pemCA, 0o600); err != nil {
		t.Fatal(err)
	}
	c := testCluster(t, "10.0.0.1")
	deploy := true
	c.MachineController.Deploy = &deploy
	c.ContainerRuntime.Containerd.Registries = map[string]v1beta1.ContainerdRegistry{
		"registry.example.com": {TLSConfig: &v1beta1.RegistryTLSConfig{CAFile: ca},
			Auth: &v1beta1.RegistryAuth{Username: "robot", Password: "node-settings-password"}}}
	d, err := Desire(c, inputs(t, c), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bootstrap.ParseSettings(d.Rendered.NodeSettings)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.RegistryCAs["registry.example.com"]) != string(pemCA) {
		t.Errorf("the registry's CA file is not in the node settings: %v", s.RegistryCAs)
	}
	if s.CNIPods == nil || s.CNIPods.Namespace != "kube-flannel" || s.CNIPods.Selector != "app=flannel" {
		t.Errorf("cniPods = %+v, want flannel's DaemonSet pods", s.CNIPods)
	}
	if s.Cluster.ContainerRuntime.Containerd.Registries["registry.example.com"].Auth.Password != "node-settings-password" {
		t.Error("the registry's credentials are not in the node settings")
	}
	if v2 := string(d.Rendered.NodeCredentials["containerd-auth-v2.toml"]); !strings.Contains(v2, `password = "node-settings-password"`) ||
		len(d.Rendered.NodeCredentials) != 2 {
		t.Errorf("the node credentials that pool machines fetch are %q, want the registry's credentials in both containerd forms", d.Rendered.NodeCredentials)
	}
	if h := d.Plan.Addons["machine-controller"]; strings.Contains(h, "node-settings") {
		t.Errorf("the plan holds the settings: %s", h)
	}

	before := d.Plan.Addons["machine-controller"]
	c.Proxy.HTTPS = "http://proxy.example.com:3128"
	d, err = Desire(c, inputs(t, c), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Plan.Addons["machine-controller"] == before {
		t.Error("a new proxy for pool machines does not change the machine-controller's hash: apply would not write it")
	}
	if !strings.Contains(string(d.Rendered.NodeCredentials["proxy.env"]), "HTTPS_PROXY=http://proxy.example.com:3128\n") {
		t.Errorf("the node credentials lack the proxy: %q", d.Rendered.NodeCredentials)
	}
}
