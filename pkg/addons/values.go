package addons

import (
	"net"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Values are what the Go templates of addons.path see, as {{ .ClusterName }} and so on. The
// doc comment of addons.path in the manifest API (config print --full) lists the same fields,
// and a test keeps the two together.
type Values struct {
	// ClusterName is the manifest's name, e.g. demo.
	ClusterName string
	// KubernetesVersion is versions.kubernetes with its "v", e.g. v1.36.3.
	KubernetesVersion string
	// PodSubnet is clusterNetwork.podSubnet, e.g. 10.244.0.0/16.
	PodSubnet string
	// ServiceSubnet is clusterNetwork.serviceSubnet, e.g. 10.96.0.0/12.
	ServiceSubnet string
	// ServiceDomain is clusterNetwork.serviceDomainName, e.g. cluster.local.
	ServiceDomain string
	// APIEndpoint is the API's host:port, e.g. 10.0.0.10:6443 ([fd00::10]:6443 for an IPv6
	// address), and APIHost and APIPort its two halves.
	APIEndpoint string
	APIHost     string
	APIPort     int
}

// ValuesFor returns the values of the defaulted manifest c.
func ValuesFor(c *v1beta1.Cluster) Values {
	port := c.APIEndpoint.Port
	if port == 0 {
		port = v1beta1.DefaultAPIPort
	}
	return Values{
		ClusterName:       c.Name,
		KubernetesVersion: "v" + strings.TrimPrefix(c.Versions.Kubernetes, "v"),
		PodSubnet:         c.ClusterNetwork.PodSubnet,
		ServiceSubnet:     c.ClusterNetwork.ServiceSubnet,
		ServiceDomain:     c.ClusterNetwork.ServiceDomainName,
		APIEndpoint:       net.JoinHostPort(c.APIEndpoint.Host, strconv.Itoa(port)),
		APIHost:           c.APIEndpoint.Host,
		APIPort:           port,
	}
}
