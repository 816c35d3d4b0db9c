package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/pkg/controller"
	"github.com/slipway-dev/slipway/test/envtest"
)

// countingTransport counts the controller's cloud API calls by method and route.
type countingTransport struct {
	base   http.RoundTripper
	mu     sync.Mutex
	counts map[string]int
}

var idRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}`)

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.counts[r.Method+" "+idRe.ReplaceAllString(r.URL.Path, "{id}")]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// take returns the counts so far and starts again from zero.
func (c *countingTransport) take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, total := c.counts, 0
	for _, n := range out {
		total += n
	}
	c.counts = map[string]int{}
	return out, total
}

// BenchmarkScale500 scales a MachineDeployment 0→500→0 through the real controllers, with the
// controller's production options (10 workers, 5 s poll) and the provider's production rate
// limit, against a simulator that answers every call after 20 ms and builds a server in 1 s.
// It counts the controller's OpenStack calls per machine (the test's kubelet uses a separate
// provider whose calls are not counted):
//
//	go test -run '^$' -bench Scale500 -benchtime 1x ./pkg/cloud/openstack/integration/
//
// SLIPWAY_BENCH_MACHINES changes the 500, and SLIPWAY_BENCH_INSTANCE_TTL the provider's
// InstanceTTL.
func BenchmarkScale500(b *testing.B) {
	env := envtest.Get(b)
	n := 500
	if v := os.Getenv("SLIPWAY_BENCH_MACHINES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	for range b.N {
		var err error
		ns := env.Namespace(b)
		sim := openstacktest.NewTLS(openstacktest.Options{Latency: 20 * time.Millisecond, BuildTime: time.Second})
		b.Cleanup(sim.Close)
		counter := &countingTransport{base: trusting(b, sim), counts: map[string]int{}}
		cfg := simEnv(sim)
		delete(cfg, "OS_CACERT") // the transports trust the simulator themselves
		lookup := func(k string) (string, bool) { v, ok := cfg[k]; return v, ok }
		uid := string(uuid.NewUUID())
		opts := openstack.Options{ClusterUID: uid, LookupEnv: lookup, Transport: counter}
		if v := os.Getenv("SLIPWAY_BENCH_INSTANCE_TTL"); v != "" { // to weigh staleness against calls
			if opts.InstanceTTL, err = time.ParseDuration(v); err != nil {
				b.Fatal(err)
			}
		}
		p, err := openstack.New(clusterName, opts)
		if err != nil {
			b.Fatal(err)
		}
		observer, err := openstack.New(clusterName, openstack.Options{ClusterUID: uid, LookupEnv: lookup,
			Transport: trusting(b, sim), QPS: 1000, Burst: 1000, InstanceTTL: -1, BuildingTTL: -1})
		if err != nil {
			b.Fatal(err)
		}
		c := &simCloud{Provider: p, sim: sim, spec: simSpec(b, false), observer: observer}
		env.StartKubelet(b, ns, c.observer)
		mgr := env.StartManager(b, c, controller.Options{Namespace: ns, ClusterName: clusterName}, controller.ManagerOptions{})
		md := deployment(b, ns, c, 0, 1)
		if err := env.Client.Create(context.Background(), md); err != nil {
			b.Fatal(err)
		}
		// Warm the session and the lookups as a running controller would have them.
		if err := p.Validate(context.Background(), &v1alpha1.Machine{Spec: md.Spec.Template.Spec}); err != nil {
			b.Fatal(err)
		}
		counter.take()

		start := time.Now()
		setReplicas(b, env, md, int32(n))
		waitCount(b, env, sim, ns, n)
		up := time.Since(start)
		upCalls, upTotal := counter.take()

		start = time.Now()
		setReplicas(b, env, md, 0)
		waitCount(b, env, sim, ns, 0)
		down := time.Since(start)
		downCalls, downTotal := counter.take()
		mgr.Stop()

		b.ReportMetric(up.Seconds(), "s-scale-up")
		b.ReportMetric(float64(upTotal)/float64(n), "calls/machine-up")
		b.ReportMetric(down.Seconds(), "s-scale-down")
		b.ReportMetric(float64(downTotal)/float64(n), "calls/machine-down")
		fmt.Printf("scale 0→%d: converged in %.1fs, %d OpenStack calls, %.2f per machine; peak %d servers\n",
			n, up.Seconds(), upTotal, float64(upTotal)/float64(n), sim.PeakServers())
		printRoutes(upCalls, n)
		fmt.Printf("scale %d→0: converged in %.1fs, %d OpenStack calls, %.2f per machine; left: %q\n",
			n, down.Seconds(), downTotal, float64(downTotal)/float64(n), c.Leaks())
		printRoutes(downCalls, n)
	}
}

func printRoutes(counts map[string]int, n int) {
	routes := make([]string, 0, len(counts))
	for r := range counts {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		fmt.Printf("  %-50s %6d  %.2f/machine\n", r, counts[r], float64(counts[r])/float64(n))
	}
}

// waitCount waits until exactly n Machines run and the cloud holds n servers (and nothing else
// when n is 0).
func waitCount(b *testing.B, env *envtest.Env, sim *openstacktest.Sim, ns string, n int) {
	envtest.Eventually(b, 10*time.Minute, fmt.Sprintf("%d running machines", n), func() (bool, string) {
		var ms v1alpha1.MachineList
		if err := env.Client.List(context.Background(), &ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		running := 0
		for _, m := range ms.Items {
			if m.Status.Phase == v1alpha1.MachinePhaseRunning {
				running++
			}
		}
		servers := len(sim.Servers())
		return len(ms.Items) == n && running == n && servers == n,
			fmt.Sprintf("%d machines, %d running, %d servers", len(ms.Items), running, servers)
	})
}
