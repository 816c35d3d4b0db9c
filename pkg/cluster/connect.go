// Package cluster is the front of slipway's commands against a whole cluster: it connects to
// the hosts and runs each command's flow as one short function over named stages. apply is
// probe (package probe) → desire (the manifest rendered, desire.go) → plan (plan.Build) →
// confirm → lock → phases (package phases) → kubeconfig; reset and kubeconfig are shorter.
// It owns those flows, the apply lock and the kubeconfig file; what each stage does lives in
// its own package.
package cluster

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// ConnectOptions configure SSH for a run.
type ConnectOptions struct {
	// TrustUnknownHosts accepts host keys seen for the first time and records them in the
	// cluster's known_hosts file. Changed keys are refused regardless.
	TrustUnknownHosts bool
	// KnownHostsFile overrides the per-cluster known_hosts file.
	KnownHostsFile string
	// ConnectTimeout is how long a host whose SSH refuses or times out is retried (a server
	// still booting); zero means ssh.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Verbose receives live remote output, prefixed with [host].
	Verbose io.Writer
	// Notices receives a line when a host's SSH is retried (a server still booting).
	Notices io.Writer
}

// Target is a cluster as the commands reach it: the manifest, its hosts in manifest order
// (leader first), and SSH to each. Nothing changes it after it is built; probing returns the
// hosts with their node names settled instead.
type Target struct {
	Manifest *v1beta1.Cluster
	Nodes    []*inventory.Node
	SSH      ssh.Hosts
	// Secrets are hidden from verbose output and errors: the manifest's, and those a run
	// creates (bootstrap tokens, certificate keys). Nil in tests that need none.
	Secrets *ssh.Secrets
}

// NewTarget lists the hosts of c, reached through hosts.
func NewTarget(c *v1beta1.Cluster, hosts ssh.Hosts) *Target {
	return &Target{Manifest: c, Nodes: inventory.Nodes(c), SSH: hosts}
}

// access reaches the cluster's API and etcd through the target's control planes.
func (t *Target) access() *access.Cluster {
	return access.New(t.Nodes, t.SSH, t.Manifest.APIEndpoint)
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

// Connect prepares SSH access to every host of c. Nothing is dialled until first use; close
// the pool when done.
func Connect(c *v1beta1.Cluster, opts ConnectOptions) (*ssh.Pool, *Target, error) {
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
	secrets := &ssh.Secrets{}
	secrets.Add(c.Secrets()...)
	pool := ssh.NewPool(ssh.Options{
		ClusterKnownHostsFile: kh,
		TrustOnFirstUse:       opts.TrustUnknownHosts,
		ConnectTimeout:        opts.ConnectTimeout,
		Verbose:               opts.Verbose,
		Notices:               opts.Notices,
		Secrets:               secrets,
	})
	t := NewTarget(c, pool)
	t.Secrets = secrets
	return pool, t, nil
}
