package integration_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

// clusterName tags the servers of every scenario; it is the controller's default ClusterName,
// so the orphan sweep lists them.
const clusterName = "slipway"

// simCloud is the OpenStack provider on a simulator, with the levers scenarios.Cloud asks for.
type simCloud struct {
	*openstack.Provider
	sim        *openstacktest.Sim
	clusterUID string
	spec       json.RawMessage
	// observer is a second provider on the same cloud whose requests the injected faults
	// spare: for the test's fake kubelet and checks, which are not under test.
	observer *openstack.Provider
}

// observerHeader marks the observer's requests.
const observerHeader = "X-Slipway-Test-Observer"

type headerTransport struct{ base http.RoundTripper }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(observerHeader, "1")
	return h.base.RoundTrip(r)
}

type cloudOptions struct {
	// errorRate is the fraction of API calls (every service) answered with HTTP 500.
	errorRate float64
	latency   time.Duration
	buildTime time.Duration
}

// newSimCloud starts a simulator for one test and a provider pointed at it. Every machine gets
// its own port on a subnet, a floating IP and a boot volume, so leaks of each kind would show.
func newSimCloud(t testing.TB, o cloudOptions) *simCloud {
	t.Helper()
	sim := openstacktest.NewTLS(openstacktest.Options{BuildTime: o.buildTime, Latency: o.latency})
	t.Cleanup(sim.Close)
	if o.errorRate > 0 {
		sim.InjectFault(openstacktest.Fault{Rate: o.errorRate, Status: 500, ExemptHeader: observerHeader})
	}
	env := simEnv(sim)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	policy, err := openstack.PolicyFromEnv(lookup) // as the controller reads it from its Secret
	if err != nil {
		t.Fatal(err)
	}
	opts := openstack.Options{
		ClusterUID: string(uuid.NewUUID()),
		Policy:     policy,
		LookupEnv:  lookup,
		QPS:        500, Burst: 1000, RetryBackoff: 50 * time.Millisecond, ErrorBackoff: 200 * time.Millisecond,
	}
	p, err := openstack.New(clusterName, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The fake kubelet looks at the cloud only when a Machine changes, so it must see the cloud
	// as it is, not as the provider's instance cache last saw it.
	delete(env, "OS_CACERT") // the observer's transport trusts the simulator itself
	opts.Transport, opts.InstanceTTL, opts.BuildingTTL = headerTransport{trusting(t, sim)}, -1, -1
	observer, err := openstack.New(clusterName, opts)
	if err != nil {
		t.Fatal(err)
	}
	spec := simSpec(t, true)
	return &simCloud{Provider: p, sim: sim, clusterUID: opts.ClusterUID, spec: spec, observer: observer}
}

// simEnv is the controller's configuration for sim, as its credentials Secret would hold it.
func simEnv(sim *openstacktest.Sim) map[string]string {
	return map[string]string{
		"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_USER_DOMAIN_NAME": openstacktest.DomainName, "OS_PROJECT_NAME": openstacktest.ProjectName,
		"OS_REGION_NAME": sim.Region(), "OS_CACERT": string(sim.CACert()),
	}
}

// trusting is an HTTP transport that trusts sim's certificate.
func trusting(t testing.TB, sim *openstacktest.Sim) http.RoundTripper {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(sim.CACert()) {
		t.Fatal("the simulator serves no certificate")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr
}

func (c *simCloud) CloudProvider() string              { return "openstack" }
func (c *simCloud) CloudProviderSpec() json.RawMessage { return c.spec }

// FlavorResources are those of m1.small, simSpec's flavor, as the simulator seeds it (1 vCPU,
// 2048 MiB, a 20 GB disk), with the root disk of simSpec's boot volume (10 GB) in place of the
// flavor's disk.
func (c *simCloud) FlavorResources() cloud.Resources {
	return cloud.Resources{CPU: 1, MemoryMiB: 2048, DiskGiB: 10}
}
func (c *simCloud) SetUnreachable(down bool) { c.sim.SetDown(down) }
func (c *simCloud) SetInstanceQuota(n int)   { c.sim.SetQuota(openstacktest.Quota{Instances: n}) }
func (c *simCloud) Len() int                 { return len(c.sim.Servers()) }

// serverOf finds the Machine's server in the simulator by its machine-uid metadata.
func (c *simCloud) serverOf(m *v1alpha1.Machine) (string, error) {
	for _, s := range c.sim.Servers() {
		if s.Metadata[openstack.MachineUIDKey] == string(m.UID) {
			return s.ID, nil
		}
	}
	return "", fmt.Errorf("machine %s has no server", m.Name)
}

func (c *simCloud) RemoveOutOfBand(m *v1alpha1.Machine) error {
	id, err := c.serverOf(m)
	if err != nil {
		return err
	}
	return c.sim.VanishServer(id)
}

func (c *simCloud) SetDeleteStuck(m *v1alpha1.Machine, stuck bool) error {
	id, err := c.serverOf(m)
	if err != nil {
		return err
	}
	return c.sim.SetDeleteStuck(id, stuck)
}

// Leaks describes what the simulator still holds, or "" when it is empty; the scenarios'
// cleanup checks it while the controller still runs.
func (c *simCloud) Leaks() string {
	s, p, f, v := len(c.sim.Servers()), len(c.sim.Ports()), len(c.sim.FloatingIPs()), len(c.sim.Volumes())
	if s+p+f+v == 0 {
		return ""
	}
	return fmt.Sprintf("%d servers, %d ports, %d floating IPs, %d volumes", s, p, f, v)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// simSpec is a cloudProviderSpec for the simulator; the cloud itself is the provider's
// configuration. With extras every machine also gets its own port on a subnet, a floating IP and
// a boot volume, so that a leak of any kind would show.
func simSpec(t testing.TB, extras bool) json.RawMessage {
	t.Helper()
	s := map[string]any{
		"image": "ubuntu-24.04", "flavor": "m1.small", "network": "private", "securityGroups": []string{"default"},
		"tags": map[string]string{"purpose": "envtest"},
	}
	if extras {
		s["subnet"], s["floatingIpPool"], s["rootDiskSizeGB"] = "private-subnet", "public", 10
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
