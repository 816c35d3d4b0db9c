// Package kube is slipway's client for the cluster it manages: client-go built from the
// cluster's admin kubeconfig, dialing through an SSH connection when the API is only reachable
// from the hosts, plus server-side apply of manifests and condition waits with deadlines that
// say what they waited for.
package kube

import (
	"context"
	"fmt"
	"net"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// DialFunc opens a connection, for example through an SSH tunnel.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Client talks to one cluster.
type Client struct {
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  *restmapper.DeferredDiscoveryRESTMapper
}

// New builds a client from kubeconfig bytes. dial, when set, carries every connection (an SSH
// tunnel to a host that can reach the API endpoint).
func New(kubeconfig []byte, dial DialFunc) (*Client, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the admin kubeconfig: %w", err)
	}
	if dial != nil {
		cfg.Dial = dial
	}
	cfg.Timeout = 30 * time.Second
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "slipway"
	return NewForConfig(cfg)
}

// NewForConfig builds a client from a rest.Config.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{
		Config:  cfg,
		Kube:    kc,
		Dynamic: dc,
		Mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}, nil
}

// Healthy asks the API server's /readyz, bounded by timeout.
func (c *Client) Healthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("API server %s is not ready: %w", c.Config.Host, err)
	}
	if string(body) != "ok" {
		return fmt.Errorf("API server %s is not ready: %s", c.Config.Host, body)
	}
	return nil
}
