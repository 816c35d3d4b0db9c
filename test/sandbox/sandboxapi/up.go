package sandboxapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options configure Up. Zero values get the defaults noted on each field.
type Options struct {
	// Name of the sandbox, part of every Docker object's name and label value. Default "sandbox".
	Name string
	// Dir is the state directory. Default $SLIPWAY_SANDBOX_DIR, else <Root>/test/sandbox/.state.
	Dir string
	// Subnet is the sandbox network, an IPv4 /24. Default 172.30.0.0/24.
	Subnet string
	// Hosts is the number of bare hosts (default 4); the first ControlPlanes of them (default up
	// to 3, leaving at least one worker when there are 2 or more hosts) are control planes.
	Hosts, ControlPlanes int
	// LB adds an haproxy host in front of the control planes.
	LB bool
	// Versions are the Kubernetes versions to build and serve. Default DefaultVersions.
	Versions []string
	// Kubernetes is the version written into slipway.yaml. Default the last of Versions.
	Kubernetes string
	// Cache is the artifact cache. Default $SLIPWAY_CACHE, else ~/.cache/slipway.
	Cache string
	// Root is the repository root. Default: found upwards from the working directory.
	Root string
	// ExactCoreDNS builds each CoreDNS version kubeadm wants instead of one shared build
	// (see artifacts.Options).
	ExactCoreDNS bool
	// SlipwayVersion is the tag of the machine-controller image the sandbox serves: the version
	// of the slipway binary that will deploy it. Default: git describe, as the Makefile's VERSION.
	SlipwayVersion string
	// Pool adds a worker pool of OpenStack servers to slipway.yaml (see Pool). Default none.
	// Its Replicas default to 2.
	Pool *Pool
	// Log receives progress. Default discards it.
	Log io.Writer
}

// DefaultVersions are the three minors of the supported window, oldest first: consecutive, so
// that upgrades can be tested, and the newest for fresh installs. The module proxy refuses some of
// v1.35.5's staging modules (403), hence v1.35.4.
var DefaultVersions = []string{"v1.35.4", "v1.36.3", "v1.37.2"}

// Up brings the sandbox to the state the options describe, creating what is missing and keeping
// what already matches, then writes the state directory's files. It is idempotent.
func Up(ctx context.Context, o Options) (*Sandbox, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	u := &upRun{opts: o}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"docker daemon", func(ctx context.Context) error { return ensureDocker(ctx, o.Cache, o.Log) }},
		{"host limits", func(context.Context) error { return raiseHostLimits(o.Log) }},
		{"artifacts", u.prepare},
		{"assetd binary", u.buildAssetd},
		{"state", u.newState},
		{"network", func(ctx context.Context) error { return u.sb.ensureNetwork(ctx) }},
		{"containers", u.containers},
		{"hosts reachable", u.wait},
		{"state files", func(ctx context.Context) error { return u.sb.writeFiles(ctx) }},
	}
	start := time.Now()
	for _, s := range steps {
		t := time.Now()
		if err := s.run(ctx); err != nil {
			return nil, fmt.Errorf("sandbox up, %s: %w", s.name, err)
		}
		fmt.Fprintf(o.Log, "%-20s %6.1fs\n", s.name, time.Since(t).Seconds())
	}
	fmt.Fprintf(o.Log, "%-20s %6.1fs\n", "up", time.Since(start).Seconds())
	return u.sb, nil
}

func (o *Options) defaults() error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Name == "" {
		o.Name = "sandbox"
	}
	if !validName(o.Name) {
		return fmt.Errorf("sandbox name %q: use lowercase letters, digits and dashes", o.Name)
	}
	if o.Root == "" {
		root, err := RepoRoot()
		if err != nil {
			return err
		}
		o.Root = root
	}
	if o.Dir == "" {
		o.Dir = DefaultDir(o.Root)
	}
	if o.Cache == "" {
		o.Cache = DefaultCache()
	}
	for _, p := range []*string{&o.Dir, &o.Cache, &o.Root} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if o.Subnet == "" {
		o.Subnet = "172.30.0.0/24"
	}
	if o.Hosts == 0 {
		o.Hosts = 4
	}
	if o.ControlPlanes == 0 {
		o.ControlPlanes = min(3, max(1, o.Hosts-1))
	}
	if len(o.Versions) == 0 {
		o.Versions = DefaultVersions
	}
	if o.Kubernetes == "" {
		o.Kubernetes = o.Versions[len(o.Versions)-1]
	}
	if o.Pool != nil {
		p := *o.Pool
		o.Pool = &p
		if p.Network == "" {
			return errors.New("the worker pool needs the name of its Neutron network")
		}
		if p.Replicas < 0 {
			return fmt.Errorf("worker pool replicas %d: want 1 or more", p.Replicas)
		}
		if p.Replicas == 0 {
			p.Replicas = 2
		}
	}
	for _, v := range o.Versions {
		if v == o.Kubernetes {
			return nil
		}
	}
	return fmt.Errorf("kubernetes version %s for slipway.yaml is not among the served versions %v", o.Kubernetes, o.Versions)
}

// DefaultDir is $SLIPWAY_SANDBOX_DIR, else test/sandbox/.state under the repository root.
func DefaultDir(root string) string {
	if d := os.Getenv("SLIPWAY_SANDBOX_DIR"); d != "" {
		return d
	}
	return filepath.Join(root, "test", "sandbox", ".state")
}

// DefaultCache is $SLIPWAY_CACHE, else ~/.cache/slipway.
func DefaultCache() string {
	if d := os.Getenv("SLIPWAY_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "slipway-cache")
	}
	return filepath.Join(home, ".cache", "slipway")
}

// RepoRoot finds the repository root upwards from the working directory: the sandbox runs
// scripts from it and builds assetd in it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "test", "sandbox", "node", "build.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no slipway repository above %s (looked for test/sandbox/node/build.sh)", dir)
		}
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 30 || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
