// Command sandbox runs real hosts for Slipway's e2e tests and demo as Docker containers:
//
//	go run ./test/sandbox up [--hosts 4] [--control-planes 3] [--lb] [--versions v1.35.4,v1.36.3,v1.37.2]
//	                         [--pool-network sandbox [--pool-replicas 2]] [--slipway-version v0.3.0]
//	go run ./test/sandbox status
//	go run ./test/sandbox selftest     raw kubeadm on 1 control plane + 1 worker, with timings
//	go run ./test/sandbox down [--all]
//
// See test/sandbox/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
	"github.com/slipway-dev/slipway/test/sandbox/selftest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: sandbox up|down|status|selftest [flags] (see test/sandbox/README.md)")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "state directory (default $SLIPWAY_SANDBOX_DIR or test/sandbox/.state)")
	var o sandboxapi.Options
	var versions string
	var all, keep bool
	var version, poolNetwork string
	var poolReplicas int
	switch args[0] {
	case "up":
		fs.StringVar(&o.Name, "name", "", "sandbox name (default sandbox)")
		fs.StringVar(&o.Subnet, "subnet", "", "sandbox network, an IPv4 /24 (default 172.30.0.0/24)")
		fs.IntVar(&o.Hosts, "hosts", 0, "number of bare hosts (default 4)")
		fs.IntVar(&o.ControlPlanes, "control-planes", 0, "how many of the hosts are control planes (default up to 3)")
		fs.BoolVar(&o.LB, "lb", false, "add an haproxy load balancer in front of the control planes")
		fs.StringVar(&versions, "versions", "", "Kubernetes versions to build and serve, comma-separated (default "+strings.Join(sandboxapi.DefaultVersions, ",")+")")
		fs.StringVar(&o.Kubernetes, "kubernetes", "", "version written into slipway.yaml (default the last of --versions)")
		fs.BoolVar(&o.ExactCoreDNS, "exact-coredns", false, "build every CoreDNS version kubeadm wants (default: build the newest, tag it for all)")
		fs.StringVar(&poolNetwork, "pool-network", "", "add a worker pool of OpenStack servers on this Neutron network to slipway.yaml (a provider network for the sandbox's own; make demo runs the cloud)")
		fs.IntVar(&poolReplicas, "pool-replicas", 0, "machines of the worker pool (with --pool-network; default 2)")
		fs.StringVar(&o.SlipwayVersion, "slipway-version", "", "tag of the machine-controller image served, the version of the slipway binary that deploys it (default: git describe, as make's VERSION)")
	case "down":
		fs.BoolVar(&all, "all", false, "also remove leftovers of every other sandbox on this machine (by label)")
	case "selftest":
		fs.BoolVar(&keep, "keep", false, "keep the self-test's two hosts and cluster for inspection")
		fs.StringVar(&version, "kubernetes", "", "Kubernetes version to install (default the sandbox's)")
	case "status":
	default:
		return fmt.Errorf("unknown command %q: want up, down, status or selftest", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	root, err := sandboxapi.RepoRoot()
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = sandboxapi.DefaultDir(root)
	}
	switch args[0] {
	case "up":
		o.Dir, o.Root, o.Log = *dir, root, os.Stderr
		if versions != "" {
			o.Versions = strings.Split(versions, ",")
		}
		switch {
		case poolNetwork != "":
			o.Pool = &sandboxapi.Pool{Network: poolNetwork, Replicas: poolReplicas}
		case poolReplicas != 0:
			return errors.New("--pool-replicas needs --pool-network")
		}
		sb, err := sandboxapi.Up(ctx, o)
		if err != nil {
			return err
		}
		return sb.Status(ctx, os.Stdout)
	case "down":
		return down(ctx, *dir, all)
	}
	sb, err := sandboxapi.Open(*dir)
	if err != nil {
		return err
	}
	if args[0] == "status" {
		return sb.Status(ctx, os.Stdout)
	}
	_, err = selftest.Run(ctx, sb, os.Stdout, selftest.Options{Keep: keep, Version: version})
	return err
}

func down(ctx context.Context, dir string, all bool) error {
	var err error
	if sb, oerr := sandboxapi.Open(dir); oerr == nil {
		err = sb.Down(ctx)
	} else if !all {
		return fmt.Errorf("%w (down --all removes every labelled leftover)", oerr)
	}
	if all {
		err = errors.Join(err, sandboxapi.Down(ctx, ""))
	}
	return err
}
