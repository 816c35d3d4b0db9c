package addons

import (
	"strconv"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func (v *values) cilium(c *v1beta1.Cluster) error {
	kpr := c.ClusterNetwork.CNI.Cilium.KubeProxyReplacement
	v.KubeProxyFree = kpr
	if kpr {
		// Without kube-proxy nothing routes the kubernetes Service's ClusterIP until the agent
		// runs, so agent and operator reach the API server at its endpoint.
		host, port, err := apiEndpoint(c)
		if err != nil {
			return err
		}
		v.APIHost, v.APIPort = host, port
	}
	v.CiliumConfigMap = map[string]string{
		"cluster-name":                    c.Name,
		"cluster-id":                      "0",
		"identity-allocation-mode":        "crd",
		"ipam":                            "cluster-pool",
		"cluster-pool-ipv4-cidr":          v.PodSubnet,
		"cluster-pool-ipv4-mask-size":     "24",
		"enable-ipv4":                     "true",
		"enable-ipv6":                     "false",
		"routing-mode":                    "tunnel",
		"tunnel-protocol":                 "vxlan",
		"kube-proxy-replacement":          strconv.FormatBool(kpr),
		"enable-ipv4-masquerade":          "true",
		"enable-bpf-masquerade":           strconv.FormatBool(kpr),
		"enable-health-checking":          "true",
		"enable-endpoint-health-checking": "true",
		// No Envoy: L7 policy and the Gateway API are outside this minimal install.
		"enable-l7-proxy":      "false",
		"external-envoy-proxy": "false",
		"enable-hubble":        "false",
		"enable-policy":        "default",
		"cni-exclusive":        "true",
		"custom-cni-conf":      "false",
		// Nodes stay NotReady-tainted until the agent has written the CNI configuration.
		"write-cni-conf-when-ready":      "/host/etc/cni/net.d/05-cilium.conflist",
		"agent-not-ready-taint-key":      "node.cilium.io/agent-not-ready",
		"remove-cilium-node-taints":      "true",
		"set-cilium-is-up-condition":     "true",
		"cgroup-root":                    "/run/cilium/cgroupv2",
		"bpf-map-dynamic-size-ratio":     "0.0025",
		"preallocate-bpf-maps":           "false",
		"operator-api-serve-addr":        "127.0.0.1:9234",
		"unmanaged-pod-watcher-interval": "15",
		"debug":                          "false",
	}
	return nil
}
