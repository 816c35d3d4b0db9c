package cluster

import (
	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/apiproxy"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// APIProxy returns a proxy that tunnels to the cluster's API through the control planes' SSH
// connections (the bastion's too, when there is one), the leader's first. It opens tunnels only
// to the API endpoint (under its host and its alternative names) and to each control plane's
// own API server.
func APIProxy(t *Target) (*apiproxy.Proxy, error) {
	if _, err := kubeadm.Endpoint(t.Manifest); err != nil {
		return nil, err
	}
	var hosts []apiproxy.Dialer
	for _, n := range t.Nodes {
		if n.Role == plan.ControlPlane {
			hosts = append(hosts, t.SSH.Host(n.Target))
		}
	}
	return apiproxy.New(hosts, access.Servers(t.Manifest.APIEndpoint, t.Nodes))
}
