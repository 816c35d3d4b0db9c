// Command openstack-sim runs the OpenStack simulator of pkg/cloud/openstack/openstacktest
// standalone, for manual runs and for suites in other processes:
//
//	go run ./test/openstack-sim --listen 127.0.0.1:8774
//
// It prints the OS_* variables that point a client at it, serves until interrupted, and offers
// the control API under /_sim/ (state, faults, quota, timing; see control.go in the package).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/cloud/openstack/openstacktest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openstack-sim:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, after printing the OS_* variables to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("openstack-sim", flag.ContinueOnError)
	var (
		listen    = fs.String("listen", "127.0.0.1:0", "address to listen on")
		region    = fs.String("region", "RegionOne", "region of the catalog endpoints")
		buildTime = fs.Duration("build-time", time.Second, "how long new servers stay in BUILD")
		delTime   = fs.Duration("delete-time", 0, "how long deleted servers linger as deleting")
		latency   = fs.Duration("latency", 0, "latency added to every API call")
		tokenTTL  = fs.Duration("token-ttl", time.Hour, "lifetime of Keystone tokens")
		errorRate = fs.Float64("error-rate", 0, "fraction of API calls (all services) answered with 500")
		seed      = fs.Uint64("seed", 1, "seed of the fault-injection randomness")
		verbose   = fs.Bool("v", false, "log every API call")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *errorRate < 0 || *errorRate > 1 {
		return errors.New("--error-rate must be between 0 and 1")
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *listen, err)
	}
	opts := openstacktest.Options{Region: *region, BuildTime: *buildTime, DeleteTime: *delTime,
		Latency: *latency, TokenTTL: *tokenTTL, Seed: *seed}
	if *verbose {
		opts.Logf = log.Printf
	}
	sim := openstacktest.Serve(l, opts)
	defer sim.Close()
	if *errorRate > 0 {
		sim.InjectFault(openstacktest.Fault{Rate: *errorRate, Status: 500})
	}
	fmt.Fprintf(out, "export OS_AUTH_URL=%s\n", sim.AuthURL())
	fmt.Fprintf(out, "export OS_REGION_NAME=%s\n", sim.Region())
	fmt.Fprintf(out, "export OS_USERNAME=%s OS_PASSWORD=%s\n", openstacktest.Username, openstacktest.Password)
	fmt.Fprintf(out, "export OS_DOMAIN_NAME=%s OS_PROJECT_NAME=%s\n", openstacktest.DomainName, openstacktest.ProjectName)
	fmt.Fprintf(out, "# or: OS_APPLICATION_CREDENTIAL_ID=%s OS_APPLICATION_CREDENTIAL_SECRET=%s\n",
		openstacktest.AppCredID, openstacktest.AppCredSecret)
	fmt.Fprintf(out, "# control API: %s/_sim/state\n", sim.URL())
	<-ctx.Done()
	return nil
}
