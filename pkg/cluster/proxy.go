package cluster

import (
	"net"
	"strconv"

	"github.com/slipway-dev/slipway/pkg/apiproxy"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// APIProxy returns a proxy that tunnels to the cluster's API through the control planes' SSH
// connections (the bastion's too, when there is one), the leader's first. It opens tunnels only
// to the API endpoint (under its host and its alternative names) and to each control plane's
// own API server.
func APIProxy(t *Target) (*apiproxy.Proxy, error) {
	endpoint, err := kubeadm.Endpoint(t.Manifest)
	if err != nil {
		return nil, err
	}
	allowed := []string{endpoint}
	_, port, _ := net.SplitHostPort(endpoint)
	for _, alt := range t.Manifest.APIEndpoint.AlternativeNames {
		allowed = append(allowed, net.JoinHostPort(alt, port))
	}
	var hosts []apiproxy.Dialer
	for _, n := range t.Nodes {
		if n.Role != plan.ControlPlane {
			continue
		}
		hosts = append(hosts, t.SSH.Host(n.Target))
		for _, a := range []string{n.Host.PrivateAddress, n.Host.PublicAddress} {
			if a != "" {
				allowed = append(allowed, net.JoinHostPort(a, strconv.Itoa(kubeadm.APIServerBindPort)))
			}
		}
	}
	return apiproxy.New(hosts, allowed)
}
