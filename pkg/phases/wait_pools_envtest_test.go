package phases

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/pools"
	"github.com/slipway-dev/slipway/test/envtest"
)

// consoleHypervisor runs no machines: servers turn ACTIVE as records, and each has a console
// log of 30 numbered lines, one of which prints a bootstrap token, as a failing join might.
type consoleHypervisor struct{}

func (consoleHypervisor) Spawn(context.Context, openstacktest.Machine) error { return nil }
func (consoleHypervisor) Destroy(context.Context, string) error              { return nil }
func (consoleHypervisor) Power(context.Context, string, openstacktest.PowerAction) error {
	return nil
}
func (consoleHypervisor) SyncNetwork(context.Context, openstacktest.Topology) error { return nil }
func (consoleHypervisor) Console(_ context.Context, id string, lines int) (string, error) {
	var all []string
	for i := 1; i <= 30; i++ {
		all = append(all, fmt.Sprintf("console line %02d of %s", i, id))
	}
	all[27] = "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef: connection refused\r\x1b[0m"
	if lines > 0 && lines < len(all) {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n") + "\n", nil
}

// poolsRun is the part of a run that waiting for the pools reads, over the test's apiserver
// and the simulated cloud.
type poolsRun struct {
	kc      *kube.Client
	names   []string
	timeout time.Duration
	env     map[string]string

	mu    sync.Mutex
	lines []string
}

func (r *poolsRun) Kube(context.Context) (*kube.Client, error) { return r.kc, nil }
func (r *poolsRun) PoolTimeout() time.Duration                 { return r.timeout }
func (r *poolsRun) Rendered() Rendered {
	var docs []string
	for _, n := range r.names {
		docs = append(docs, fmt.Sprintf("apiVersion: cluster.k8s.io/v1alpha1\nkind: MachineDeployment\nmetadata:\n  name: %s\n", n))
	}
	return Rendered{MachineDeployments: []byte(strings.Join(docs, "---\n"))}
}
func (r *poolsRun) Logf(host, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, "["+host+"] "+fmt.Sprintf(format, args...))
}
func (r *poolsRun) Console(ctx context.Context, c *kube.Client) (pools.Console, error) {
	return OpenStackConsole(ctx, c, "slipway", func(k string) (string, bool) { v, ok := r.env[k]; return v, ok })
}
func (r *poolsRun) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := strings.Join(r.lines, "\n")
	r.lines = nil
	return out
}

// TestWaitPools runs the real machine-controller against a real apiserver and the OpenStack
// simulator. The test plays only the kubelets (envtest.Kubelet registers each Machine's Node
// with its provider ID and reports it Ready), except for the pool "stuck", whose Machine's
// Node never registers. Waiting for "good" prints each Machine's way to Ready and ends; waiting
// again returns at once; waiting for "stuck" fails with the Machine's name, its phase and its
// console tail, which the simulator serves.
func TestWaitPools(t *testing.T) {
	env := envtest.Get(t)
	saved := kube.Poll
	kube.Poll = 100 * time.Millisecond
	t.Cleanup(func() { kube.Poll = saved })
	ctx := context.Background()
	ns := env.Namespace(t)

	sim := openstacktest.NewTLS(openstacktest.Options{BuildTime: 300 * time.Millisecond, Hypervisor: consoleHypervisor{}})
	t.Cleanup(sim.Close)
	cloudEnv := map[string]string{
		"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_USER_DOMAIN_NAME": openstacktest.DomainName, "OS_PROJECT_NAME": openstacktest.ProjectName,
		"OS_REGION_NAME": sim.Region(), "OS_CACERT": string(sim.CACert()),
	}
	provider, err := openstack.New("slipway", openstack.Options{ClusterUID: string(uuid.NewUUID()),
		LookupEnv: func(k string) (string, bool) { v, ok := cloudEnv[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	env.StartKubelet(t, ns, nil, envtest.NeverJoin(func(m *v1alpha1.Machine) bool { return m.Labels["pool"] == "stuck" }))
	opts := envtest.TestOptions(ns)
	opts.ClusterName = "slipway"
	env.StartManager(t, provider, opts, controller.ManagerOptions{})
	for _, name := range []string{"good", "stuck"} {
		if err := env.Client.Create(ctx, poolDeployment(t, ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	kc, err := kube.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}

	// Success: every step of the Machine's way is reported once, with its time.
	r := &poolsRun{kc: kc, names: []string{"good"}, timeout: 2 * time.Minute, env: cloudEnv}
	if err := waitPools(ctx, r, ns); err != nil {
		t.Fatalf("waiting for the pool that joins: %v\n%s", err, r.log())
	}
	out := r.log()
	t.Logf("progress:\n%s", out)
	for _, want := range []string{"Machine of pool good created, phase", "server ACTIVE, openstack:///", "address ", "registered after ", "] Ready after ", "[] pool good: 1 of 1 Machines Ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("the progress lacks %q:\n%s", want, out)
		}
	}
	if reg, ready := afterOf(t, out, " registered after "), afterOf(t, out, "] Ready after "); ready < reg {
		t.Errorf("Ready after %s, before the Node registered (after %s)", ready, reg)
	}
	if n := strings.Count(out, "] Ready after "); n != 1 {
		t.Errorf("Ready reported %d times, want once:\n%s", n, out)
	}

	// A re-apply with the pool Ready: no wait and no Machine lines, only the summary.
	began := time.Now()
	if err := waitPools(ctx, r, ns); err != nil {
		t.Fatalf("waiting again: %v", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("waiting for a Ready pool took %s; it should return at once", took)
	}
	if out := r.log(); out != "[] pool good: 1 of 1 Machines Ready" {
		t.Errorf("waiting for a Ready pool printed:\n%s\nwant only the summary", out)
	}

	// -o json: the pools as the run left them.
	res, err := pools.Status(ctx, kc, ns, []string{"good"})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var shape []struct {
		Name     string
		Replicas int32
		Ready    int32
		Machines []map[string]any
	}
	if err := json.Unmarshal(js, &shape); err != nil || len(shape) != 1 || shape[0].Name != "good" || shape[0].Replicas != 1 || shape[0].Ready != 1 || len(shape[0].Machines) != 1 {
		t.Fatalf("pools as JSON: %s (%v)", js, err)
	}
	m := shape[0].Machines[0]
	for _, key := range []string{"name", "phase", "providerID", "address", "node", "ready", "elapsed", "elapsedSeconds"} {
		if _, ok := m[key]; !ok {
			t.Errorf("a Machine as JSON lacks %q: %s", key, js)
		}
	}
	if m["ready"] != true || !strings.HasPrefix(fmt.Sprint(m["providerID"]), "openstack:///") || m["phase"] != string(v1alpha1.MachinePhaseRunning) {
		t.Errorf("the Ready Machine as JSON: %v", m)
	}

	// Timeout: the stuck Machine is named with its phase and its console tail, the good one not.
	var stuck v1alpha1.Machine
	envtest.Eventually(t, time.Minute, "the stuck pool's server to run", func() (bool, string) {
		var ms v1alpha1.MachineList
		if err := env.Client.List(ctx, &ms); err != nil {
			return false, err.Error()
		}
		for _, m := range ms.Items {
			if m.Namespace == ns && m.Labels["pool"] == "stuck" && m.Status.Phase != "" && m.Spec.ProviderID != nil && len(m.Status.Addresses) > 0 {
				stuck = m
				return true, ""
			}
		}
		return false, "no stuck Machine with a server yet"
	})
	r = &poolsRun{kc: kc, names: []string{"good", "stuck"}, timeout: 2 * time.Second, env: cloudEnv}
	err = waitPools(ctx, r, ns)
	if err == nil {
		t.Fatal("waiting for a pool whose Node never registers succeeded")
	}
	msg := err.Error()
	t.Logf("timeout error:\n%s", msg)
	id := strings.TrimPrefix(*stuck.Spec.ProviderID, "openstack:///")
	for _, want := range []string{
		"the worker pools were not Ready after 2s",
		"pool stuck: 0 of 1 Machines Ready",
		"Machine " + stuck.Name + ": phase ",
		"NodeJoined=False",
		"server openstack:///" + id,
		"last 20 lines of its console log:",
		"| console line 30 of " + id,
		"| console line 11 of " + id,
		"<redacted bootstrap token>",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the timeout error lacks %q", want)
		}
	}
	for _, bad := range []string{"last error", "console line 10 of", "pool good", "0123456789abcdef", "\x1b", "\r"} {
		if strings.Contains(msg, bad) {
			t.Errorf("the timeout error holds %q", bad)
		}
	}

	// A Machine with a terminal error ends the wait long before its timeout, with the error.
	if err := env.Client.Create(ctx, poolDeployment(t, ns, "broken")); err != nil {
		t.Fatal(err)
	}
	r = &poolsRun{kc: kc, names: []string{"broken"}, timeout: 2 * time.Minute, env: cloudEnv}
	began = time.Now()
	err = waitPools(ctx, r, ns)
	t.Logf("failed Machine after %s: %v", time.Since(began), err)
	if err == nil || !strings.HasPrefix(err.Error(), "a Machine of the worker pools failed") || !strings.Contains(err.Error(), "phase Failed") ||
		!strings.Contains(err.Error(), "no-such-flavor") || time.Since(began) > time.Minute {
		t.Errorf("waiting for a pool whose Machine fails: %v", err)
	}

	// Without credentials for the cloud, the error says so and keeps the rest.
	r = &poolsRun{kc: kc, names: []string{"stuck"}, timeout: time.Second, env: map[string]string{}}
	err = waitPools(ctx, r, ns)
	if err == nil || !strings.Contains(err.Error(), "Machine "+stuck.Name+": phase ") || !strings.Contains(err.Error(), "its console log could not be read") {
		t.Errorf("timeout without cloud credentials: %v", err)
	}
}

func poolDeployment(t *testing.T, ns, name string) *v1alpha1.MachineDeployment {
	t.Helper()
	flavor := "m1.small"
	if name == "broken" {
		flavor = "no-such-flavor"
	}
	raw, err := json.Marshal(map[string]any{"cloudProvider": "openstack", "operatingSystem": "ubuntu", "operatingSystemSpec": map[string]any{},
		"cloudProviderSpec": map[string]any{"image": "ubuntu-24.04", "flavor": flavor, "network": "private", "securityGroups": []string{"default"}}})
	if err != nil {
		t.Fatal(err)
	}
	return envtest.MachineDeployment(ns, name, map[string]string{"pool": name}, 1, 1, raw)
}

// afterOf is the time in the first progress line holding marker.
func afterOf(t *testing.T, out, marker string) time.Duration {
	t.Helper()
	i := strings.Index(out, marker)
	if i < 0 {
		return 0
	}
	rest := out[i+len(marker):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		t.Fatalf("progress line %q: %v", out[i:], err)
	}
	return d
}
