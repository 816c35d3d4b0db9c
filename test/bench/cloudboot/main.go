// Command cloudboot measures OpenStack in a box: how long a server takes from `server create` to
// ACTIVE, to an SSH banner on its floating IP, and to cloud-init's "finished" line on its console,
// for one server and for several created at once; and how long the simulator takes to answer
// everyday API calls. It starts its own simulator with servers as sandbox hosts (Docker, root).
//
//	go run ./test/bench/cloudboot -servers 1,5 -rounds 3
//
// Figures go to test/bench/cloudboot.md; take them on a quiet machine and write the load average
// beside them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
)

func main() {
	counts := flag.String("servers", "1,5", "comma-separated numbers of servers created at once")
	rounds := flag.Int("rounds", 3, "rounds per count")
	calls := flag.Int("calls", 200, "API calls per kind for the latency figures")
	flag.Parse()
	if err := run(*counts, *rounds, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "cloudboot:", err)
		os.Exit(1)
	}
}

type clients struct{ compute, network *gophercloud.ServiceClient }

func run(counts string, rounds, calls int) error {
	ctx := context.Background()
	b, err := hosts.New(ctx, hosts.Options{Name: "cloudboot"})
	if err != nil {
		return err
	}
	defer b.Close(context.Background())
	sim := openstacktest.New(openstacktest.Options{Hypervisor: b})
	defer sim.Close()
	netID, _ := sim.AddNetwork("bench", "10.242.0.0/24", false)
	var ext string
	for _, n := range sim.Networks() {
		if n.External {
			ext = n.ID
		}
	}
	c, err := connect(ctx, sim)
	if err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average before: %s", load)
	if err := latency(ctx, c, calls); err != nil {
		return err
	}
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-servers: %q is not a positive number", s)
		}
		for r := 1; r <= rounds; r++ {
			if err := boot(ctx, c, sim, netID, ext, n, r); err != nil {
				return err
			}
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("load average after: %s", load)
	return nil
}

func connect(ctx context.Context, sim *openstacktest.Sim) (clients, error) {
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: sim.AuthURL(),
		Username: openstacktest.Username, Password: openstacktest.Password,
		DomainName: openstacktest.DomainName, TenantName: openstacktest.ProjectName})
	if err != nil {
		return clients{}, err
	}
	var c clients
	eo := gophercloud.EndpointOpts{Region: sim.Region()}
	if c.compute, err = openstack.NewComputeV2(pc, eo); err != nil {
		return c, err
	}
	c.network, err = openstack.NewNetworkV2(pc, eo)
	return c, err
}

// latency times sequential calls of a few everyday kinds and prints the median and p99.
func latency(ctx context.Context, c clients, n int) error {
	kinds := []struct {
		name string
		call func() error
	}{
		{"GET flavors/detail", func() error { _, err := flavors.ListDetail(c.compute, nil).AllPages(ctx); return err }},
		{"GET servers/detail", func() error { _, err := servers.List(c.compute, nil).AllPages(ctx); return err }},
		{"GET networks", func() error { _, err := networks.List(c.network, nil).AllPages(ctx); return err }},
	}
	for _, k := range kinds {
		var d []time.Duration
		for range n {
			t := time.Now()
			if err := k.call(); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
			d = append(d, time.Since(t))
		}
		slices.Sort(d)
		fmt.Printf("api %-20s n=%d median %s p99 %s\n", k.name, n, d[len(d)/2].Round(time.Microsecond), d[len(d)*99/100].Round(time.Microsecond))
	}
	return nil
}

type result struct {
	active, fixedSSH, ssh, cloudInit time.Duration
	err                              error
}

// boot creates n servers at once with floating IPs and waits for each to be ACTIVE, answer SSH
// on its floating IP, and print cloud-init's final line on its console; then deletes them.
func boot(ctx context.Context, c clients, sim *openstacktest.Sim, netID, ext string, n, round int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	results := make([]result, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = bootOne(ctx, c, sim, fmt.Sprintf("bench-%d-%d", round, i), netID, ext, start)
		}()
	}
	wg.Wait()
	var errs []error
	var act, fixedSSH, ssh, ci []time.Duration
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		act, fixedSSH, ssh, ci = append(act, r.active), append(fixedSSH, r.fixedSSH), append(ssh, r.ssh), append(ci, r.cloudInit)
	}
	if len(errs) == 0 {
		fmt.Printf("boot servers=%d round=%d  ACTIVE max %s  SSH on the fixed IP max %s  SSH max %s (min %s)  cloud-init done max %s\n", n, round,
			slices.Max(act).Round(time.Millisecond), slices.Max(fixedSSH).Round(time.Millisecond), slices.Max(ssh).Round(time.Millisecond),
			slices.Min(ssh).Round(time.Millisecond), slices.Max(ci).Round(time.Millisecond))
	}
	return errors.Join(append(errs, cleanup(context.Background(), c, sim))...)
}

func bootOne(ctx context.Context, c clients, sim *openstacktest.Sim, name, netID, ext string, start time.Time) result {
	var r result
	srv, err := servers.Create(ctx, c.compute, servers.CreateOpts{Name: name, ImageRef: sim.Images()[0].ID, FlavorRef: "2",
		Networks: []servers.Network{{UUID: netID}}, UserData: []byte("#cloud-config\nruncmd:\n  - [touch, /root/booted]\n")}, nil).Extract()
	if err != nil {
		return result{err: err}
	}
	var fixed string
	if err := wait(ctx, poll, func() (bool, error) {
		s, err := servers.Get(ctx, c.compute, srv.ID).Extract()
		if err != nil || s.Status == "ERROR" {
			return false, fmt.Errorf("server %s: %v %v", name, err, s)
		}
		for _, addrs := range s.Addresses {
			for _, a := range addrs.([]any) {
				fixed, _ = a.(map[string]any)["addr"].(string)
			}
		}
		return s.Status == "ACTIVE", nil
	}); err != nil {
		return result{err: err}
	}
	r.active = time.Since(start)
	fixedDone := make(chan time.Duration, 1)
	go func() {
		_ = wait(ctx, poll, func() (bool, error) { return sshBanner(fixed), nil })
		fixedDone <- time.Since(start)
	}()
	var portID string
	for _, p := range sim.Ports() {
		if p.DeviceID == srv.ID {
			portID = p.ID
		}
	}
	fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{FloatingNetworkID: ext, PortID: portID}).Extract()
	if err != nil {
		return result{err: fmt.Errorf("floating IP for %s (%s): %w", name, fixed, err)}
	}
	if err := wait(ctx, poll, func() (bool, error) { return sshBanner(fip.FloatingIP), nil }); err != nil {
		return result{err: fmt.Errorf("%s: SSH at %s: %w", name, fip.FloatingIP, err)}
	}
	r.ssh = time.Since(start)
	r.fixedSSH = <-fixedDone
	// Each console read runs `docker logs` in the simulator: polled as often as the cheap checks,
	// five servers' reads would take the CPU the others still boot with.
	if err := wait(ctx, consolePoll, func() (bool, error) {
		out, err := servers.ShowConsoleOutput(ctx, c.compute, srv.ID, servers.ShowConsoleOutputOpts{Length: 50}).Extract()
		return err == nil && strings.Contains(out, "Cloud-init v.") && strings.Contains(out, " finished at "), nil
	}); err != nil {
		return result{err: fmt.Errorf("%s: cloud-init: %w", name, err)}
	}
	r.cloudInit = time.Since(start)
	return r
}

// sshBanner reports whether an SSH server answers with its version line.
func sshBanner(addr string) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "22"), time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4)
	_, err = conn.Read(buf)
	return err == nil && string(buf) == "SSH-"
}

// cleanup deletes every server and floating IP and waits until they are gone.
func cleanup(ctx context.Context, c clients, sim *openstacktest.Sim) error {
	for _, f := range sim.FloatingIPs() {
		if err := floatingips.Delete(ctx, c.network, f.ID).ExtractErr(); err != nil {
			return err
		}
	}
	for _, s := range sim.Servers() {
		if err := servers.Delete(ctx, c.compute, s.ID).ExtractErr(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return wait(ctx, poll, func() (bool, error) { return len(sim.Servers()) == 0, nil })
}

// Poll intervals: API reads and TCP dials are cheap; a console read starts a process.
const (
	poll        = 50 * time.Millisecond
	consolePoll = 500 * time.Millisecond
)

func wait(ctx context.Context, every time.Duration, cond func() (bool, error)) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
