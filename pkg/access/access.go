// Package access reaches a running cluster through its control-plane hosts: the Kubernetes API
// with the admin kubeconfig a control plane holds, and etcd with its health-check client
// certificate, both tunnelled over that host's SSH connection, so that the API and etcd need
// not be reachable from the operator's machine. The probe reads the cluster through it and the
// phases change the cluster through it; it owns the one API client of a run. A host's admin
// kubeconfig is data: Vet keeps its server, CA and credentials and refuses the rest.
package access

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// AdminConf is where kubeadm leaves the admin kubeconfig on a control plane.
const AdminConf = "/etc/kubernetes/admin.conf"

// Limits of what is read from a control plane into memory: kubeadm's admin.conf is a few KiB
// (its certificate and key embedded), a certificate or key file a few KiB at most.
const (
	maxAdminConfBytes = 1 << 20
	maxPKIFileBytes   = 64 << 10
)

// Cluster reaches one cluster through the control planes among its nodes, in their order (the
// leader first). It is safe for concurrent use.
type Cluster struct {
	controlPlanes []*inventory.Node
	hosts         ssh.Hosts
	// servers are where the API answers (see Servers): an admin kubeconfig pointing elsewhere
	// is refused.
	servers []string

	mu   sync.Mutex
	kube *kube.Client
}

// New returns access through the control planes among nodes, to the API at endpoint (the
// manifest's). Nothing is dialled until first use. Only each node's SSH target and addresses
// are used, so it serves before and after the probe has settled the nodes' names.
func New(nodes []*inventory.Node, hosts ssh.Hosts, endpoint v1beta1.APIEndpoint) *Cluster {
	a := &Cluster{hosts: hosts, servers: Servers(endpoint, nodes)}
	for _, n := range nodes {
		if n.Role == plan.ControlPlane {
			cp := *n
			a.controlPlanes = append(a.controlPlanes, &cp)
		}
	}
	return a
}

// AdminKubeconfig downloads the admin kubeconfig from the first control plane that has one,
// and returns it, rebuilt from what Vet accepts of it, with that host. A host whose file Vet
// refuses stops the search: a planted kubeconfig is an alarm, not a missing file.
func (a *Cluster) AdminKubeconfig(ctx context.Context) ([]byte, ssh.Host, error) {
	var errs []error
	for _, n := range a.controlPlanes {
		h := a.hosts.Host(n.Target)
		data, err := ssh.ReadFile(ctx, h, AdminConf, maxAdminConfBytes)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vetted, err := Vet(data, h.Name(), AdminConf, a.servers)
		if err != nil {
			return nil, nil, err
		}
		return vetted, h, nil
	}
	return nil, nil, fmt.Errorf("no control-plane host has %s yet: %w", AdminConf, errors.Join(errs...))
}

// Kube returns a client for the cluster, built from the admin kubeconfig of the first control
// plane that has one and tunnelled through that host's SSH connection. It is built once and
// kept until Forget.
func (a *Cluster) Kube(ctx context.Context) (*kube.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kube != nil {
		return a.kube, nil
	}
	data, h, err := a.AdminKubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	c, err := kube.New(data, h.DialContext)
	if err != nil {
		return nil, err
	}
	a.kube = c
	return c, nil
}

// Forget drops the client, after the cluster was (re)initialised: the next Kube reads the new
// admin kubeconfig.
func (a *Cluster) Forget() {
	a.mu.Lock()
	a.kube = nil
	a.mu.Unlock()
}

// WaitAPI waits until the API server answers through the client.
func (a *Cluster) WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error) {
	var c *kube.Client
	err := kube.Wait(ctx, "the Kubernetes API to become ready", timeout, func(ctx context.Context) (bool, string, error) {
		var err error
		if c == nil {
			if c, err = a.Kube(ctx); err != nil {
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

// Etcd connects to the cluster's etcd through the SSH connection of a control plane that holds
// the etcd client certificates, using every other control plane's client URL as an endpoint.
// The caller closes the client.
func (a *Cluster) Etcd(ctx context.Context) (*etcd.Client, error) {
	var errs []error
	for _, n := range a.controlPlanes {
		h := a.hosts.Host(n.Target)
		creds, err := etcdCredentials(ctx, h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		endpoints := []string{"https://" + net.JoinHostPort(n.Address(), "2379")}
		for _, o := range a.controlPlanes {
			if o != n {
				endpoints = append(endpoints, "https://"+net.JoinHostPort(o.Address(), "2379"))
			}
		}
		return etcd.New(ctx, endpoints, creds, h.DialContext)
	}
	return nil, fmt.Errorf("no control-plane host has the etcd client certificates: %w", errors.Join(errs...))
}

func etcdCredentials(ctx context.Context, h ssh.Host) (etcd.Credentials, error) {
	var creds etcd.Credentials
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{
		{"/etc/kubernetes/pki/etcd/ca.crt", &creds.CA},
		{"/etc/kubernetes/pki/etcd/healthcheck-client.crt", &creds.Cert},
		{"/etc/kubernetes/pki/etcd/healthcheck-client.key", &creds.Key},
	} {
		data, err := ssh.ReadFile(ctx, h, f.path, maxPKIFileBytes)
		if err != nil {
			return creds, err
		}
		*f.dst = data
	}
	return creds, nil
}
