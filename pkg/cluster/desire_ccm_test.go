package cluster

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/ccmdeploy"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/probe"
)

// TestDesireCloudController: with cloudProvider.openstack and external, the desired state holds
// the cloud-controller-manager's objects (its Secret carrying the environment's credentials) and
// their hash, which changes with the credentials; the plan, as printed and as JSON, carries the
// hash and never the credentials; without the provider nothing is rendered.
func TestDesireCloudController(t *testing.T) {
	const password = "desire-password-0815"
	for k, v := range map[string]string{"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin",
		"OS_PASSWORD": password, "OS_PROJECT_NAME": "demo", "OS_REGION_NAME": "RegionOne"} {
		t.Setenv(k, v)
	}
	c := testCluster(t, "10.0.0.1")
	c.CloudProvider = v1beta1.CloudProvider{OpenStack: &v1beta1.OpenStackCloud{}, External: true}
	d, err := Desire(c, inputs(t, c), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	hash := d.Plan.Addons["cloud-controller-manager"]
	if hash == "" || hash != d.Rendered.CloudControllerHash || len(d.Rendered.CloudController) == 0 {
		t.Fatalf("hash %q, rendered %d objects", hash, len(d.Rendered.CloudController))
	}
	if s := d.Rendered.CloudController[0]; s.GetKind() != "Secret" || s.GetName() != ccmdeploy.ConfigSecret {
		t.Errorf("the first object is %s %s, want the cloud.conf Secret", s.GetKind(), s.GetName())
	}
	if !strings.Contains(strings.Join(d.Rendered.CloudControllerSecrets, " "), password) {
		t.Error("the password is not among the values the run hides")
	}

	p, err := plan.Build(d.Plan, plan.Observed{Hosts: []plan.HostState{{Name: "10.0.0.1", Role: plan.ControlPlane}}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	plan.Print(&out, c.Name, c.Versions.Kubernetes, p)
	js, _ := json.Marshal(struct {
		D plan.Desired
		P *plan.Plan
	}{d.Plan, p})
	if !strings.Contains(out.String(), plan.StepCloudController) {
		t.Errorf("the plan has no %s step:\n%s", plan.StepCloudController, out.String())
	}
	for what, s := range map[string]string{"printed plan": out.String(), "plan JSON": string(js)} {
		if strings.Contains(s, password) || strings.Contains(s, "cloud.conf") {
			t.Errorf("the %s holds the credentials:\n%s", what, s)
		}
	}

	t.Setenv("OS_PASSWORD", "another-password")
	again, err := Desire(c, inputs(t, c), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Plan.Addons["cloud-controller-manager"] == hash {
		t.Error("new credentials leave the hash unchanged: apply would not roll them out")
	}

	none := testCluster(t, "10.0.0.1")
	d, err = Desire(none, inputs(t, none), &probe.Observed{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Plan.Addons["cloud-controller-manager"]; ok || d.Rendered.CloudController != nil {
		t.Error("a cluster without OpenStack gets a cloud-controller-manager")
	}
}
