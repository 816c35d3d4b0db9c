package openstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

const (
	testCluster    = "test-cluster"
	testClusterUID = "0b0e5c1a-7a4d-4a53-9b43-5d1f6c0e2a11"
)

// newSim starts a simulator that serves https, as production clouds do.
func newSim(t testing.TB, opts openstacktest.Options) *openstacktest.Sim {
	t.Helper()
	sim := openstacktest.NewTLS(opts)
	t.Cleanup(sim.Close)
	return sim
}

// simEnv is the controller's configuration for sim: the OS_* variables of a password login, and
// the simulator's certificate as OS_CACERT, as the credentials Secret carries them.
func simEnv(sim *openstacktest.Sim) map[string]string {
	return map[string]string{
		"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_USER_DOMAIN_NAME": openstacktest.DomainName, "OS_PROJECT_NAME": openstacktest.ProjectName,
		"OS_REGION_NAME": sim.Region(), "OS_CACERT": string(sim.CACert()),
	}
}

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// newProvider returns a provider whose cloud is sim, configured as the controller's environment
// configures it, unless opts says otherwise.
func newProvider(t testing.TB, sim *openstacktest.Sim, opts openstack.Options) *openstack.Provider {
	t.Helper()
	if opts.LookupEnv == nil {
		opts.LookupEnv = lookupIn(simEnv(sim))
	}
	if opts.ClusterUID == "" {
		opts.ClusterUID = testClusterUID
	}
	if opts.ErrorBackoff == 0 {
		opts.ErrorBackoff = 10 * time.Millisecond
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = 10 * time.Millisecond
	}
	if opts.QPS == 0 {
		opts.QPS, opts.Burst = 1000, 1000
	}
	if opts.InstanceTTL == 0 && opts.BuildingTTL == 0 {
		opts.InstanceTTL, opts.BuildingTTL = -1, -1 // tests count and fault every Get; TestInstanceCache turns it on
	}
	p, err := openstack.New(testCluster, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// spec is a minimal valid cloudProviderSpec, with extra fields merged in. It names no cloud:
// that is the provider's configuration (see newProvider).
func spec(_ *openstacktest.Sim, extra map[string]any) map[string]any {
	s := map[string]any{"image": "ubuntu-24.04", "flavor": "m1.small", "network": "private"}
	for k, v := range extra {
		if v == nil {
			delete(s, k)
			continue
		}
		s[k] = v
	}
	return s
}

var machineSeq int

// newMachine returns a Machine with a fresh UID and the given cloudProviderSpec.
func newMachine(t testing.TB, cps map[string]any) *v1alpha1.Machine {
	t.Helper()
	machineSeq++
	value, err := json.Marshal(map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": cps, "operatingSystem": "ubuntu"})
	if err != nil {
		t.Fatal(err)
	}
	return &v1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("worker-%d", machineSeq), Namespace: "kube-system",
			UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", machineSeq))},
		Spec: v1alpha1.MachineSpec{ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: value}}},
	}
}

// store holds the persisted Machine, as the API server would, and hands out updaters that can
// be made to fail, to simulate a controller that dies between two writes.
type store struct {
	mu        sync.Mutex
	persisted *v1alpha1.Machine
	writes    int
	failing   bool
	failAfter int // when failing, every write after this many fails
}

func newStore(m *v1alpha1.Machine) *store { return &store{persisted: m.DeepCopy()} }

var errCrash = errors.New("simulated controller crash")

func (s *store) update(ctx context.Context, mutate func(*v1alpha1.Machine)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing && s.writes >= s.failAfter {
		return errCrash
	}
	s.writes++
	mutate(s.persisted)
	return nil
}

// machine returns the persisted Machine, as a restarted controller would read it.
func (s *store) machine() *v1alpha1.Machine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persisted.DeepCopy()
}

// waitRunning polls Get until the server runs.
func waitRunning(t testing.TB, p cloud.Provider, m *v1alpha1.Machine) *cloud.Instance {
	t.Helper()
	var inst *cloud.Instance
	poll(t, "server running", func() bool {
		var err error
		inst, err = p.Get(context.Background(), m)
		return err == nil && inst.State == cloud.StateRunning
	})
	return inst
}

func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// deleteAll calls Delete until it reports done.
func deleteAll(t testing.TB, p cloud.Provider, st *store) {
	t.Helper()
	poll(t, "delete done", func() bool {
		done, err := p.Delete(context.Background(), st.machine(), st.update)
		if err != nil {
			t.Logf("delete: %v", err)
		}
		return done
	})
}

// assertEmpty fails unless the cloud holds no servers, ports, floating IPs or volumes.
func assertEmpty(t testing.TB, sim *openstacktest.Sim) {
	t.Helper()
	if s, p, f, v := len(sim.Servers()), len(sim.Ports()), len(sim.FloatingIPs()), len(sim.Volumes()); s+p+f+v > 0 {
		t.Fatalf("leaked: %d servers, %d ports, %d floating IPs, %d volumes", s, p, f, v)
	}
}

func mustTerminal(t testing.TB, err error, reason v1alpha1.MachineStatusError) *cloud.TerminalError {
	t.Helper()
	te, ok := cloud.AsTerminal(err)
	if !ok || te.Reason != reason {
		t.Fatalf("want terminal %s, got %v", reason, err)
	}
	return te
}

func findID[T any](t testing.TB, items []T, match func(T) bool, id func(T) string) string {
	t.Helper()
	for _, it := range items {
		if match(it) {
			return id(it)
		}
	}
	t.Fatal("no such item")
	return ""
}

// created makes m's server through p, and returns the store that holds m's records.
func created(t testing.TB, p cloud.Provider, m *v1alpha1.Machine) *store {
	t.Helper()
	st := newStore(m)
	if _, err := p.Create(context.Background(), m, st.update, ""); err != nil {
		t.Fatal(err)
	}
	return st
}
