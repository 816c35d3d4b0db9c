package steps

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// Env is what the steps of one run share: the cluster description, the hosts and how to reach
// them, what probing found, and a lazily built client for the cluster.
type Env struct {
	Cluster *v1beta1.Cluster
	Nodes   []*inventory.Node
	Hosts   map[string]ssh.Host // by node name
	Facts   map[string]*Facts   // by node name
	// PrereqHashes are the prerequisites hashes found on the hosts, by node name.
	PrereqHashes map[string]string
	// Log receives step output worth showing (what changed), prefixed by the caller.
	Log io.Writer

	mu   sync.Mutex
	kube *kube.Client

	// joinMu guards the credentials that every join of this run shares: one bootstrap token
	// and, for control planes, one upload of the certificates under one key. Init fills them
	// with what it gave kubeadm; otherwise the first join creates them.
	joinMu    sync.Mutex
	joinToken string
	certKey   string
}

// Node returns the node named name.
func (e *Env) Node(name string) (*inventory.Node, error) {
	for _, n := range e.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no host named %q in the manifest", name)
}

// nodeAndKube returns the node named host and a client for the cluster, what every step that
// works on one host's Node needs first.
func (e *Env) nodeAndKube(ctx context.Context, host string) (*inventory.Node, *kube.Client, error) {
	n, err := e.Node(host)
	if err != nil {
		return nil, nil, err
	}
	c, err := e.Kube(ctx)
	if err != nil {
		return nil, nil, err
	}
	return n, c, nil
}

// Leader returns the leader node.
func (e *Env) Leader() *inventory.Node { return inventory.Leader(e.Nodes) }

// Kube returns a client for the cluster, built from the admin kubeconfig of the first control
// plane that has one and tunnelled through that host's SSH connection. It is built once.
func (e *Env) Kube(ctx context.Context) (*kube.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.kube != nil {
		return e.kube, nil
	}
	var errs []error
	for _, n := range e.Nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		h := e.Hosts[n.Name]
		var buf bytes.Buffer
		if err := h.Download(ctx, "/etc/kubernetes/admin.conf", &buf); err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := kube.New(buf.Bytes(), h.DialContext)
		if err != nil {
			return nil, err
		}
		e.kube = c
		return c, nil
	}
	return nil, fmt.Errorf("no control-plane host has /etc/kubernetes/admin.conf yet: %v", errs)
}

// ResetKube drops the cached client, after the cluster was (re)initialised.
func (e *Env) ResetKube() {
	e.mu.Lock()
	e.kube = nil
	e.mu.Unlock()
}

// WaitAPI waits until the API server answers through the client.
func (e *Env) WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error) {
	var c *kube.Client
	err := kube.Wait(ctx, "the Kubernetes API to become ready", timeout, func(ctx context.Context) (bool, string, error) {
		var err error
		if c == nil {
			if c, err = e.Kube(ctx); err != nil {
				return false, "", err
			}
		}
		if err := c.Healthy(ctx, 10*time.Second); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	return c, err
}

// logf writes a line to the step log.
func (e *Env) logf(host, format string, args ...any) {
	if e.Log == nil {
		return
	}
	prefix := ""
	if host != "" {
		prefix = "[" + host + "] "
	}
	fmt.Fprintf(e.Log, "         %s%s\n", prefix, fmt.Sprintf(format, args...))
}

// Facts are what probing found on a host.
type Facts = scripts.Facts
