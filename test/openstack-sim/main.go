// Command openstack-sim runs the OpenStack simulator of pkg/cloud/openstack/openstacktest
// standalone, for manual runs and for suites in other processes:
//
//	go run ./test/openstack-sim --listen 127.0.0.1:8774 [--hosts [--provider-network NAME=DOCKERNETWORK]...]
//	                            [--forward PORT=HOST:PORT]... [--dir DIR]
//	go run ./test/openstack-sim down [--name openstack]
//
// It prints the OS_* variables that point a client at it, serves until interrupted, and offers
// the control API under /_sim/ (state, faults, quota, timing; see control.go in the package).
// With --hosts every server boots as a sandbox host (test/openstack-sim/hosts); they are removed
// when the simulator stops, because its records die with it. A provider network maps a Neutron
// network, once a client creates it, to an existing Docker network, so that servers boot beside
// what else is there (the demo's sandbox hosts). `down` removes what a simulator that was killed
// left behind. With --dir it writes openrc.sh and clouds.yaml there. A forward serves something
// outside the cloud (a sandbox's package mirror and registry) at the API's address, which every
// server reaches through its router, as a real cloud's servers reach the internet.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
	"github.com/slipway-dev/slipway/test/openstack-sim/hosts"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := run
	if len(os.Args) > 1 && os.Args[1] == "down" {
		run, os.Args = down, os.Args[1:]
	}
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openstack-sim:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, after printing the OS_* variables to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("openstack-sim", flag.ContinueOnError)
	var (
		listen    = fs.String("listen", "", "address to listen on (default 127.0.0.1:8774, or with --hosts the external network's gateway, port 8774, which hosts reach too)")
		useTLS    = fs.Bool("tls", false, "serve https with a certificate from a CA of its own (written to --dir as ca.pem)")
		region    = fs.String("region", "RegionOne", "region of the catalog endpoints")
		buildTime = fs.Duration("build-time", time.Second, "how long new servers stay in BUILD")
		delTime   = fs.Duration("delete-time", 0, "how long deleted servers linger as deleting")
		latency   = fs.Duration("latency", 0, "latency added to every API call")
		tokenTTL  = fs.Duration("token-ttl", time.Hour, "lifetime of Keystone tokens")
		errorRate = fs.Float64("error-rate", 0, "fraction of API calls (all services) answered with 500")
		seed      = fs.Uint64("seed", 1, "seed of the fault-injection randomness")
		verbose   = fs.Bool("v", false, "log every API call")
		withHosts = fs.Bool("hosts", false, "boot every server as a sandbox host (needs Docker and root)")
		name      = fs.String("name", "openstack", "name of the cloud: labels its hosts and networks (with --hosts)")
		dir       = fs.String("dir", "", "write openrc.sh and clouds.yaml into this directory")
		image     = fs.String("image", "", "node image the hosts run (with --hosts; default: built or found with test/sandbox/node/build.sh)")
		providers = providerNetworks{}
		forwards  = portForwards{}
	)
	fs.Var(providers, "provider-network", "NAME=DOCKERNETWORK: servers on the Neutron network NAME (created by a client, with the Docker network's CIDR and gateway) boot on the existing Docker network (with --hosts; repeatable)")
	fs.Var(forwards, "forward", "PORT=HOST:PORT: serve HOST:PORT (outside the cloud) at the API's address on PORT, which servers reach through their router (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *errorRate < 0 || *errorRate > 1 {
		return errors.New("--error-rate must be between 0 and 1")
	}
	if !*withHosts && (len(providers) > 0 || *image != "") {
		return errors.New("--provider-network and --image need --hosts")
	}
	opts := openstacktest.Options{Region: *region, BuildTime: *buildTime, DeleteTime: *delTime,
		Latency: *latency, TokenTTL: *tokenTTL, Seed: *seed}
	if *verbose {
		opts.Logf = log.Printf
	}
	var b *hosts.Backend
	if *withHosts {
		var err error
		if b, err = hosts.New(ctx, hosts.Options{Name: *name, Image: *image, Log: os.Stderr, ProviderNetworks: providers}); err != nil {
			return err
		}
		defer func() {
			if err := b.Close(context.WithoutCancel(ctx)); err != nil {
				log.Printf("openstack-sim: removing the hosts: %v", err)
			}
		}()
		opts.Hypervisor = b
	}
	sim := openstacktest.Prepare(opts)
	defer sim.Close()
	addr, err := listenAddress(ctx, *listen, sim, b)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if *useTLS {
		host, _, _ := net.SplitHostPort(l.Addr().String())
		if err := sim.StartTLS(l, host, "127.0.0.1", "localhost"); err != nil {
			l.Close()
			return err
		}
	} else {
		sim.Start(l, nil)
	}
	host, _, _ := net.SplitHostPort(l.Addr().String())
	for _, port := range slices.Sorted(maps.Keys(forwards)) {
		fl, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fmt.Errorf("--forward %s=%s: %w", port, forwards[port], err)
		}
		defer fl.Close()
		go hosts.Forward(fl, forwards[port], log.Printf)
		fmt.Fprintf(out, "# %s serves %s\n", fl.Addr(), forwards[port])
	}
	if *dir != "" {
		if err := writeClientFiles(*dir, sim); err != nil {
			return err
		}
	}
	if *errorRate > 0 {
		sim.InjectFault(openstacktest.Fault{Rate: *errorRate, Status: 500})
	}
	fmt.Fprintf(out, "export OS_AUTH_URL=%s\n", sim.AuthURL())
	fmt.Fprintf(out, "export OS_REGION_NAME=%s\n", sim.Region())
	fmt.Fprintf(out, "export OS_USERNAME=%s OS_PASSWORD=%s\n", openstacktest.Username, openstacktest.Password)
	fmt.Fprintf(out, "export OS_DOMAIN_NAME=%s OS_PROJECT_NAME=%s\n", openstacktest.DomainName, openstacktest.ProjectName)
	fmt.Fprintf(out, "# or: OS_APPLICATION_CREDENTIAL_ID=%s OS_APPLICATION_CREDENTIAL_SECRET=%s\n",
		openstacktest.AppCredID, openstacktest.AppCredSecret)
	if ca := sim.CACert(); *useTLS && *dir != "" {
		fmt.Fprintf(out, "export OS_CACERT=%s\n", filepath.Join(*dir, "ca.pem"))
	} else if *useTLS {
		fmt.Fprintf(out, "# the CA to trust (OS_CACERT):\n%s", ca)
	}
	fmt.Fprintf(out, "# control API: %s/_sim/state\n", sim.URL())
	<-ctx.Done()
	return nil
}

// listenAddress is the address given, or the default: with hosts, the external network's
// gateway (this machine's address there), so that servers reach the API as clients here do.
func listenAddress(ctx context.Context, given string, sim *openstacktest.Sim, b *hosts.Backend) (string, error) {
	if given != "" {
		return given, nil
	}
	if b == nil {
		return "127.0.0.1:8774", nil
	}
	for _, n := range sim.Networks() {
		if !n.External {
			continue
		}
		info, ok := sim.NetworkInfo(n.ID)
		if !ok {
			continue
		}
		ip, err := b.HostAddress(ctx, info)
		if err != nil {
			return "", fmt.Errorf("giving this machine an address on the external network %s: %w", n.Name, err)
		}
		return net.JoinHostPort(ip, "8774"), nil
	}
	return "", errors.New("the cloud has no external network to serve the API on: pass --listen")
}

// providerNetworks is the value of the repeatable --provider-network flag: Neutron network name
// → Docker network.
type providerNetworks map[string]string

func (p providerNetworks) String() string { return joinSorted(p) }

// joinSorted lists m as KEY=VALUE pairs in key order, comma-separated: a map flag's value.
func joinSorted(m map[string]string) string {
	var s []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s = append(s, k+"="+m[k])
	}
	return strings.Join(s, ",")
}

func (p providerNetworks) Set(v string) error {
	name, docker, ok := strings.Cut(v, "=")
	if !ok || name == "" || docker == "" {
		return fmt.Errorf("%q: want NAME=DOCKERNETWORK, such as sandbox=slipway-sandbox", v)
	}
	if d, ok := p[name]; ok && d != docker {
		return fmt.Errorf("%q: network %s is already mapped to %s", v, name, d)
	}
	p[name] = docker
	return nil
}

// portForwards is the value of the repeatable --forward flag: port → host:port.
type portForwards map[string]string

func (p portForwards) String() string { return joinSorted(p) }

func (p portForwards) Set(v string) error {
	port, target, ok := strings.Cut(v, "=")
	if n, err := strconv.Atoi(port); !ok || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: want PORT=HOST:PORT with a port from 1 to 65535, such as 5000=172.30.0.2:5000", v)
	}
	if _, tport, err := net.SplitHostPort(target); err != nil || tport == "" {
		return fmt.Errorf("%q: the target %q is not HOST:PORT", v, target)
	}
	if _, dup := p[port]; dup {
		return fmt.Errorf("%q: port %s is already forwarded to %s", v, port, p[port])
	}
	p[port] = target
	return nil
}

// down removes the hosts, networks and NAT rules of a cloud whose simulator did not stop cleanly.
func down(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("openstack-sim down", flag.ContinueOnError)
	name := fs.String("name", "openstack", "name of the cloud")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return hosts.Down(ctx, *name)
}
