// Package cluster runs slipway's commands against a whole cluster: it connects to the hosts,
// probes them and the running cluster, builds the plan, and drives the steps of apply and reset.
// Each command's flow is one short function over named steps.
package cluster

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh"
	"github.com/slipway-dev/slipway/pkg/steps"
)

// ConnectOptions configure SSH for a run.
type ConnectOptions struct {
	// TrustUnknownHosts accepts host keys seen for the first time and records them in the
	// cluster's known_hosts file. Changed keys are refused regardless.
	TrustUnknownHosts bool
	// KnownHostsFile overrides the per-cluster known_hosts file.
	KnownHostsFile string
	// Verbose receives live remote output, prefixed with [host].
	Verbose io.Writer
}

// ClusterKnownHosts is the known_hosts file slipway maintains for a cluster:
// $XDG_CONFIG_HOME/slipway/<cluster>/known_hosts.
func ClusterKnownHosts(name string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the configuration directory for known_hosts: %w", err)
	}
	return filepath.Join(dir, "slipway", name, "known_hosts"), nil
}

// Connect prepares SSH access to every host of c. Nothing is dialled until first use.
func Connect(c *v1beta1.Cluster, opts ConnectOptions) (*ssh.Pool, *steps.Env, error) {
	kh := opts.KnownHostsFile
	if kh == "" {
		var err error
		if kh, err = ClusterKnownHosts(c.Name); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(kh), 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating %s: %w", filepath.Dir(kh), err)
	}
	pool := ssh.NewPool(ssh.Options{
		ClusterKnownHostsFile: kh,
		TrustOnFirstUse:       opts.TrustUnknownHosts,
		Verbose:               opts.Verbose,
	})
	env := &steps.Env{Cluster: c, Nodes: inventory.Nodes(c), Hosts: map[string]ssh.Host{}}
	for _, n := range env.Nodes {
		env.Hosts[n.Name] = pool.Host(n.Target)
	}
	return pool, env, nil
}
