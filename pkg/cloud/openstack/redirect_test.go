package openstack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// TestControllerCredentialsStayWithItsCloud: a Machine that names its own Keystone gets nothing
// sent there by default; when the operator allows Machines to choose their cloud, the endpoint
// gets the Machine's own credentials and never the controller's password.
func TestControllerCredentialsStayWithItsCloud(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		policy openstack.Policy
		spec   map[string]any
		sent   string // what the endpoint may receive; "" for nothing at all
	}{
		{"by default", openstack.Policy{}, map[string]any{}, ""},
		{"by default, with its own password", openstack.Policy{}, map[string]any{"username": "mallory", "password": "mallorys"}, ""},
		{"allowed, without credentials", openstack.Policy{AllowMachineCloud: true}, map[string]any{}, ""},
		{"allowed, with its own password", openstack.Policy{AllowMachineCloud: true},
			map[string]any{"username": "mallory", "password": "mallorys", "domainName": "Default", "projectName": "p"}, "mallorys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attacker := openstacktest.NewRecorder()
			t.Cleanup(attacker.Close)
			p := newProvider(t, sim, openstack.Options{Policy: tc.policy})
			cps := spec(sim, tc.spec)
			cps["identityEndpoint"] = attacker.URL + "/v3"
			m := newMachine(t, cps)
			if err := p.Validate(ctx, m); err == nil {
				t.Fatal("validated a Machine whose endpoint refuses every credential")
			}
			if _, err := p.Create(ctx, m, newStore(m).update, "#cloud-config with a bootstrap token"); err == nil {
				t.Fatal("created a server")
			}
			reqs := attacker.Requests()
			if tc.sent == "" && len(reqs) > 0 {
				t.Fatalf("the Machine's endpoint received %d requests: %q", len(reqs), reqs)
			}
			for _, r := range reqs {
				if strings.Contains(r, openstacktest.Password) || strings.Contains(r, "bootstrap token") {
					t.Fatalf("the Machine's endpoint received the controller's password or the user-data: %q", r)
				}
				if !strings.Contains(r, tc.sent) {
					t.Fatalf("the Machine's endpoint received %q", r)
				}
			}
			if tc.sent != "" && len(reqs) == 0 {
				t.Fatal("the Machine's own credentials never reached its endpoint: the test proves nothing")
			}
			if n := len(sim.Servers()); n != 0 {
				t.Fatalf("the controller's cloud got %d servers", n)
			}
		})
	}
}
