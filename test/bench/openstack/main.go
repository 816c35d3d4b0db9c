// Command openstack measures what scaling out costs the cloud: it drives the OpenStack provider
// against the simulator the way the machine-controller's Machine reconciler does (Get; Create
// when there is no server; requeue after the poll interval until the server runs), with a
// fixed number of workers, and prints the API calls per machine and the time to converge.
//
//	go run ./test/bench/openstack -machines 500 -latency 20ms
//
// Lookups and the Keystone session are warmed with one Validate first, then the counters are
// reset, so the figures are those of a warm controller. It then deletes every machine and
// prints the same figures for the way down.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack"
	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

type config struct {
	machines  int
	workers   int
	latency   time.Duration
	buildTime time.Duration
	poll      time.Duration
	variant   string
	qps       float64
}

func main() {
	var c config
	flag.IntVar(&c.machines, "machines", 500, "machines to scale to")
	flag.IntVar(&c.workers, "workers", 10, "concurrent reconciles, as the controller's Workers option")
	flag.DurationVar(&c.latency, "latency", 20*time.Millisecond, "simulated latency per API call")
	flag.DurationVar(&c.buildTime, "build-time", time.Second, "how long a server stays in BUILD")
	flag.DurationVar(&c.poll, "poll", 2*time.Second, "requeue interval while a server builds or is deleted")
	flag.StringVar(&c.variant, "variant", "network", "spec: network (Nova makes the port), subnet (own port), fip (own port and floating IP), bfv (boot from volume)")
	flag.Float64Var(&c.qps, "qps", 0, "provider rate limit (0: the provider's default)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	sim := openstacktest.NewTLS(openstacktest.Options{BuildTime: c.buildTime, Latency: c.latency})
	defer sim.Close()
	// The cloud is the provider's configuration, as the controller's credentials Secret sets it.
	cloudEnv := map[string]string{
		"OS_AUTH_URL": sim.AuthURL(), "OS_USERNAME": openstacktest.Username, "OS_PASSWORD": openstacktest.Password,
		"OS_USER_DOMAIN_NAME": openstacktest.DomainName, "OS_PROJECT_NAME": openstacktest.ProjectName,
		"OS_REGION_NAME": sim.Region(), "OS_CACERT": string(sim.CACert()),
	}
	p, err := openstack.New("bench", openstack.Options{QPS: c.qps, ClusterUID: "bench",
		LookupEnv: func(k string) (string, bool) { v, ok := cloudEnv[k]; return v, ok }})
	if err != nil {
		return err
	}
	spec, err := cloudProviderSpec(c.variant)
	if err != nil {
		return err
	}
	ctx := context.Background()
	machines := make([]*machine, c.machines)
	for i := range machines {
		machines[i] = newMachine(i, spec)
	}
	if err := p.Validate(ctx, machines[0].m); err != nil {
		return fmt.Errorf("warming up: %w", err)
	}
	sim.ResetCalls()
	sim.ResetPeakServers()
	fmt.Printf("scale 0→%d, variant %s, %d workers, latency %s, build %s, poll %s\n",
		c.machines, c.variant, c.workers, c.latency, c.buildTime, c.poll)
	took, err := reconcileAll(ctx, c, machines, func(mc *machine) (bool, error) { return up(ctx, p, mc) })
	if err != nil {
		return err
	}
	report("up", took, c.machines, sim.Calls())
	fmt.Printf("  servers %d, peak %d\n", len(sim.Servers()), sim.PeakServers())

	sim.ResetCalls()
	took, err = reconcileAll(ctx, c, machines, func(mc *machine) (bool, error) {
		return p.Delete(ctx, mc.m, mc.update)
	})
	if err != nil {
		return err
	}
	report("down", took, c.machines, sim.Calls())
	fmt.Printf("  left: %d servers, %d ports, %d floating IPs, %d volumes\n",
		len(sim.Servers()), len(sim.Ports()), len(sim.FloatingIPs()), len(sim.Volumes()))
	return nil
}

// up is one Machine reconcile as the controller does it; it reports whether the machine is done.
func up(ctx context.Context, p cloud.Provider, mc *machine) (bool, error) {
	if err := p.Validate(ctx, mc.m); err != nil {
		return false, err
	}
	inst, err := p.Get(ctx, mc.m)
	if errors.Is(err, cloud.ErrInstanceNotFound) || err == nil && inst.State == cloud.StateError {
		inst, err = p.Create(ctx, mc.m, mc.update, "#cloud-config\n")
	}
	if err != nil {
		return false, err
	}
	return inst.State == cloud.StateRunning, nil
}

// reconcileAll runs step for every machine with c.workers workers, requeueing a machine after
// c.poll until step reports it done. It returns the time until all are done.
func reconcileAll(ctx context.Context, c config, machines []*machine, step func(*machine) (bool, error)) (time.Duration, error) {
	start := time.Now()
	queue := make(chan *machine, len(machines))
	for _, m := range machines {
		queue <- m
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	remaining := len(machines)
	var firstErr error
	allDone := make(chan struct{})
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-allDone:
					return
				case mc := <-queue:
					done, err := step(mc)
					mu.Lock()
					if err != nil && !isRetryable(err) {
						if firstErr == nil {
							firstErr = fmt.Errorf("%s: %w", mc.m.Name, err)
						}
						done = true // failed for good; the controller would stop too
					}
					if done {
						remaining--
						if remaining == 0 {
							close(allDone)
						}
					} else {
						time.AfterFunc(c.poll, func() { queue <- mc })
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), firstErr
}

func isRetryable(err error) bool {
	_, terminal := cloud.AsTerminal(err)
	return !terminal
}

func report(phase string, took time.Duration, n int, calls openstacktest.CallStats) {
	fmt.Printf("%s: converged in %s; %d API calls, %.2f per machine (%d errors)\n",
		phase, took.Round(time.Millisecond), calls.Total, float64(calls.Total)/float64(n), calls.Errors)
	routes := make([]string, 0, len(calls.ByRoute))
	for r := range calls.ByRoute {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		fmt.Printf("  %-45s %6d  %.2f/machine\n", r, calls.ByRoute[r], float64(calls.ByRoute[r])/float64(n))
	}
}

// machine is a Machine with an in-memory store standing in for the API server.
type machine struct {
	mu sync.Mutex
	m  *v1alpha1.Machine
}

func (mc *machine) update(_ context.Context, mutate func(*v1alpha1.Machine)) error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	mutate(mc.m)
	return nil
}

func newMachine(i int, spec map[string]any) *machine {
	raw, _ := json.Marshal(map[string]any{"cloudProvider": "openstack", "cloudProviderSpec": spec, "operatingSystem": "ubuntu"})
	return &machine{m: &v1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("workers-%04d", i), Namespace: "kube-system",
			UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))},
		Spec: v1alpha1.MachineSpec{ProviderSpec: v1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}},
	}}
}

func cloudProviderSpec(variant string) (map[string]any, error) {
	s := map[string]any{
		"image": "ubuntu-24.04", "flavor": "m1.small", "network": "private", "securityGroups": []string{"default"},
	}
	switch variant {
	case "network":
	case "subnet":
		s["subnet"] = "private-subnet"
	case "fip":
		s["floatingIpPool"] = "public"
	case "bfv":
		s["rootDiskSizeGB"] = 20
	default:
		return nil, fmt.Errorf("unknown variant %q", variant)
	}
	return s, nil
}
