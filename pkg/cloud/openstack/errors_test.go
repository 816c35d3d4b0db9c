package openstack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// An exhausted quota is a CapacityError, never terminal: the controller retries it until quota
// frees. Its message keeps the cloud's words, which name the quota.
func TestQuotaIsCapacity(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		quota openstacktest.Quota
		extra map[string]any
		want  string
	}{
		{"instances", openstacktest.Quota{Instances: 1}, nil, "Quota exceeded for instances"},
		{"cores", openstacktest.Quota{Cores: 3}, map[string]any{"flavor": "m1.medium"}, "Quota exceeded for cores"},
		{"floating ips", openstacktest.Quota{FloatingIPs: 1}, map[string]any{"floatingIpPool": "public"}, "Quota exceeded for resources: ['floatingip']"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := newSim(t, openstacktest.Options{})
			p := newProvider(t, sim, openstack.Options{})
			sim.SetQuota(tc.quota)
			first := newMachine(t, spec(sim, tc.extra))
			if _, err := p.Create(ctx, first, newStore(first).update, ""); err != nil {
				t.Fatalf("first machine: %v", err)
			}
			m := newMachine(t, spec(sim, tc.extra))
			st := newStore(m)
			_, err := p.Create(ctx, m, st.update, "")
			ce, ok := cloud.AsCapacity(err)
			if !ok {
				t.Fatalf("want a capacity error, got %v", err)
			}
			if _, terminal := cloud.AsTerminal(err); terminal {
				t.Fatalf("a quota error is terminal: %v", err)
			}
			if !strings.Contains(ce.Message, tc.want) || !strings.HasPrefix(err.Error(), string(v1alpha1.InsufficientResourcesMachineError)+": ") {
				t.Fatalf("error %q lacks %q or the reason", err, tc.want)
			}
			// Asked again once quota frees (as the controller does), the same Machine gets its
			// server; whatever the refused attempt had made is reused or released.
			sim.SetQuota(openstacktest.Quota{})
			if _, err := p.Create(ctx, m, st.update, ""); err != nil {
				t.Fatalf("the second machine once quota freed: %v", err)
			}
			if n := len(sim.Servers()); n != 2 {
				t.Fatalf("%d servers, want both machines'", n)
			}
			deleteAll(t, p, st)
			if n := len(sim.Servers()); n != 1 {
				t.Fatalf("%d servers, want only the first machine's", n)
			}
		})
	}
}

// TestRetriesHonourRetryAfter: 429 and 503 are retried transparently; Retry-After is waited
// out, and without it the backoff grows.
func TestRetriesHonourRetryAfter(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{RetryBackoff: 20 * time.Millisecond})
	ctx := context.Background()
	m := newMachine(t, spec(sim, nil))
	if err := p.Validate(ctx, m); err != nil { // warm the session and lookups
		t.Fatal(err)
	}
	sim.InjectFault(openstacktest.Fault{Service: "compute", Method: "POST", Status: 429, RetryAfter: time.Second, Times: 2})
	start := time.Now()
	if _, err := p.Create(ctx, m, newStore(m).update, ""); err != nil {
		t.Fatalf("create through two 429s: %v", err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Fatalf("two Retry-After: 1 answers were retried after %s; want at least 2s", d)
	}
	if got := sim.Calls().ByRoute["POST /compute/v2.1/servers"]; got != 3 {
		t.Fatalf("%d create calls, want 3 (two refused, one accepted)", got)
	}

	sim.InjectFault(openstacktest.Fault{Service: "compute", Method: "GET", Status: 503, Times: 3})
	start = time.Now()
	if _, err := p.Get(ctx, m); err != nil {
		t.Fatalf("get through three 503s: %v", err)
	}
	if d := time.Since(start); d < (20+40+80)*time.Millisecond {
		t.Fatalf("exponential backoff took only %s", d)
	}

	// A cloud that keeps refusing gives up after MaxRetries, with the cloud's status.
	sim.InjectFault(openstacktest.Fault{Service: "compute", Method: "GET", Status: 503})
	_, err := p.Get(ctx, m)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("want a 503 error after the retries, got %v", err)
	}
}

func TestCredentialsErrorsAreInvalidConfiguration(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		extra map[string]any
		want  string
		env   map[string]string // changes to the controller's configuration
	}{
		{"wrong password", nil, "rejected the credentials", map[string]string{"OS_PASSWORD": "nope"}},
		{"mixed credentials", nil, "set only one kind", map[string]string{"OS_APPLICATION_CREDENTIAL_ID": "x"}},
		{"no auth url", nil, "or OS_AUTH_URL", map[string]string{"OS_AUTH_URL": ""}},
		{"spec names another cloud", map[string]any{"identityEndpoint": "https://keystone.example/v3"}, "identityEndpoint: Forbidden", nil},
		{"region not in the catalog", map[string]any{"region": "RegionTwo"}, `region "RegionTwo" is not in the service catalog`, nil},
		{"unknown field", map[string]any{"flavour": "m1.small"}, "flavour: Forbidden: unknown field", nil},
		{"unknown flavor", map[string]any{"flavor": "m9.huge"}, `flavor "m9.huge" not found`, nil},
		{"unknown image and network", map[string]any{"image": "nope", "network": "nope"}, `image "nope" not found; network "nope" not found`, nil},
		{"disk below min_disk", map[string]any{"rootDiskSizeGB": 5}, "smaller than image ubuntu-24.04's min_disk of 10", nil},
		{"flavor disk below min_disk", map[string]any{"flavor": "m1.tiny"}, "set rootDiskSizeGB", nil},
		{"pool is not external", map[string]any{"floatingIpPool": "private"}, "not an external network", nil},
		{"unknown zone", map[string]any{"availabilityZone": "mars"}, `availability zone "mars" not found`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := simEnv(sim)
			for k, v := range tc.env {
				env[k] = v
			}
			p := newProvider(t, sim, openstack.Options{LookupEnv: lookupIn(env)})
			m := newMachine(t, spec(sim, tc.extra))
			err := p.Validate(ctx, m)
			te := mustTerminal(t, err, v1alpha1.InvalidConfigurationMachineError)
			if !strings.Contains(te.Message, tc.want) {
				t.Fatalf("message %q lacks %q", te.Message, tc.want)
			}
			if _, err := p.Create(ctx, m, newStore(m).update, ""); !isTerminal(err) {
				t.Fatalf("Create must fail the same way, got %v", err)
			}
		})
	}
	if n := len(sim.Servers()) + len(sim.Ports()); n != 0 {
		t.Fatalf("invalid specs allocated %d objects", n)
	}
}

func isTerminal(err error) bool {
	_, ok := cloud.AsTerminal(err)
	return ok
}

// TestSessionIsReused: one authentication serves every call until the token expires, and an
// expired token costs one re-authentication.
func TestSessionIsReused(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	p := newProvider(t, sim, openstack.Options{})
	ctx := context.Background()
	st := created(t, p, newMachine(t, spec(sim, nil)))
	for range 5 {
		if _, err := p.Get(ctx, st.machine()); err != nil {
			t.Fatal(err)
		}
	}
	auths := func() int { return sim.Calls().ByRoute["POST /identity/v3/auth/tokens"] }
	if auths() != 1 {
		t.Fatalf("%d authentications, want 1", auths())
	}
	sim.ExpireTokens()
	for range 3 {
		if _, err := p.Get(ctx, st.machine()); err != nil {
			t.Fatalf("after token expiry: %v", err)
		}
	}
	if auths() != 2 {
		t.Fatalf("%d authentications, want 2", auths())
	}
}

// TestTokenRenewedBeforeExpiry: a token about to expire is renewed before the call, not after
// a 401.
func TestTokenRenewedBeforeExpiry(t *testing.T) {
	sim := newSim(t, openstacktest.Options{TokenTTL: 2 * time.Second})
	p := newProvider(t, sim, openstack.Options{TokenRenewMargin: 1900 * time.Millisecond})
	ctx := context.Background()
	m := newMachine(t, spec(sim, nil))
	if err := p.Validate(ctx, m); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	sim.ResetCalls()
	if err := p.Validate(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Lookups are cached, so the only call is the renewal, and nothing was refused.
	st := sim.Calls()
	if st.ByRoute["POST /identity/v3/auth/tokens"] != 1 || st.Total != 1 || st.Errors != 0 {
		t.Fatalf("want one renewal and no 401: %+v", st)
	}
}

func TestApplicationCredentialsFromEnvironment(t *testing.T) {
	sim := newSim(t, openstacktest.Options{})
	env := map[string]string{
		"OS_AUTH_URL": sim.AuthURL(), "OS_REGION_NAME": sim.Region(), "OS_CACERT": string(sim.CACert()),
		"OS_APPLICATION_CREDENTIAL_ID": openstacktest.AppCredID, "OS_APPLICATION_CREDENTIAL_SECRET": openstacktest.AppCredSecret,
	}
	p := newProvider(t, sim, openstack.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	m := newMachine(t, map[string]any{"image": "cirros", "flavor": "m1.tiny", "network": "private"})
	if err := p.Validate(context.Background(), m); err != nil {
		t.Fatalf("credentials from OS_* variables: %v", err)
	}
}
