package kubeone

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func (c *converter) network(k *cluster, out *v1beta1.Cluster) {
	n := &k.ClusterNetwork
	p := field.NewPath("clusterNetwork")
	o := &out.ClusterNetwork
	o.PodSubnet, o.ServiceSubnet, o.ServiceDomainName, o.NodePortRange = n.PodSubnet, n.ServiceSubnet, n.ServiceDomainName, n.NodePortRange
	for _, f := range []struct{ name, value string }{{"podSubnetIPv6", n.PodSubnetIPv6}, {"serviceSubnetIPv6", n.ServiceSubnetIPv6}} {
		if f.value != "" {
			c.warn(p.Child(f.name), "not supported: slipway runs single-stack IPv4 clusters")
		}
	}
	if n.IPFamily != "" && n.IPFamily != "IPv4" {
		c.errs = append(c.errs, field.NotSupported(p.Child("ipFamily"), n.IPFamily, []string{"IPv4"}))
	}
	if n.NodeCIDRMaskSizeIPv4 != nil && *n.NodeCIDRMaskSizeIPv4 != 24 {
		c.warn(p.Child("nodeCIDRMaskSizeIPv4"), "not supported: slipway gives each node a /24 of the pod subnet (kubeadm's default)")
	}
	if n.NodeCIDRMaskSizeIPv6 != nil {
		c.warn(p.Child("nodeCIDRMaskSizeIPv6"), "not supported: slipway runs single-stack IPv4 clusters")
	}
	if n.DNSServiceIP != "" {
		c.warn(p.Child("dnsServiceIP"), "not supported: the cluster DNS Service gets the tenth address of serviceSubnet (kubeadm's default)")
	}
	c.cni(n.CNI, p.Child("cni"), o)
	c.canalMTU(k, o)
	c.kubeProxy(n.KubeProxy, p.Child("kubeProxy"), o)
}

func (c *converter) cni(n *cni, p *field.Path, o *v1beta1.ClusterNetwork) {
	switch {
	case n == nil || (n.Canal == nil && n.Cilium == nil && n.WeaveNet == nil && n.External == nil):
		// KubeOne's default is canal; slipway's is flannel, so the choice is written out.
		o.CNI.Canal = &v1beta1.Canal{MTU: v1beta1.DefaultCanalMTU}
		c.comment("clusterNetwork.cni", "KubeOne's default CNI (canal, MTU 1450) written out: slipway's default is flannel.")
		c.warn(p, "unset: KubeOne's default, canal, is written out, since slipway's default CNI is flannel")
	case n.Canal != nil:
		o.CNI.Canal = &v1beta1.Canal{MTU: n.Canal.MTU}
		if n.Canal.MTU == 0 {
			o.CNI.Canal.MTU = v1beta1.DefaultCanalMTU
			c.comment("clusterNetwork.cni.canal.mtu", "KubeOne's default MTU written out.")
		}
	case n.Cilium != nil:
		cl := &v1beta1.Cilium{}
		switch r := n.Cilium.KubeProxyReplacement.(type) {
		case nil:
		case bool:
			cl.KubeProxyReplacement = r
		case string:
			switch r {
			case "strict", "true":
				cl.KubeProxyReplacement = true
			case "disabled", "false", "":
			default:
				c.errs = append(c.errs, field.NotSupported(p.Child("cilium", "kubeProxyReplacement"), r, []string{"strict", "disabled", "true", "false"}))
			}
		default:
			c.errs = append(c.errs, field.Invalid(p.Child("cilium", "kubeProxyReplacement"), r, "must be a boolean, strict or disabled"))
		}
		o.CNI.Cilium = cl
		for _, f := range []struct {
			name string
			set  bool
		}{{"enableHubble", n.Cilium.EnableHubble}, {"enableL2Announcements", n.Cilium.EnableL2Announcements}, {"enableGatewayAPI", n.Cilium.EnableGatewayAPI}} {
			if f.set {
				c.warn(p.Child("cilium", f.name), "not supported: slipway installs Cilium without it; enable it in Cilium's configuration yourself (an addon)")
			}
		}
	case n.WeaveNet != nil:
		// Replacing a running CNI would cut every pod off; external leaves weave as it runs.
		o.CNI.External = &v1beta1.ExternalCNI{}
		c.warn(p.Child("weaveNet"), "not supported: slipway does not install Weave Net (it is no longer maintained); written as cni.external, so slipway leaves the running Weave Net alone. Plan a move to canal, cilium or flannel")
		c.comment("clusterNetwork.cni", "KubeOne installed Weave Net, which slipway does not: external leaves the running one alone.")
	case n.External != nil:
		o.CNI.External = &v1beta1.ExternalCNI{}
	}
}

// canalMTU warns that KubeOne releases before 1.7 defaulted canal's MTU on OpenStack to 1400,
// not 1450: the running cluster says which one it has.
func (c *converter) canalMTU(k *cluster, o *v1beta1.ClusterNetwork) {
	n := k.ClusterNetwork.CNI
	if o.CNI.Canal == nil || !c.onOpenStack(k) || (n != nil && n.Canal != nil && n.Canal.MTU != 0) {
		return
	}
	c.warn(field.NewPath("clusterNetwork", "cni", "canal", "mtu"), "unset, written as 1450 (KubeOne's default now); older KubeOne releases used 1400 on OpenStack: "+
		"compare veth_mtu in the kube-system/canal-config ConfigMap and set the same value")
}

func (c *converter) kubeProxy(kp *kubeProxy, p *field.Path, o *v1beta1.ClusterNetwork) {
	if kp == nil {
		return
	}
	if kp.IPVS != nil {
		o.KubeProxy.Mode = "ipvs"
		for _, name := range []string{"scheduler", "excludeCIDRs", "strictARP", "tcpTimeout", "tcpFinTimeout", "udpTimeout"} {
			if v, ok := kp.IPVS[name]; ok && !zero(v) {
				c.warn(p.Child("ipvs", name), "not supported: slipway runs kube-proxy's IPVS mode with kube-proxy's defaults")
			}
		}
		for name := range kp.IPVS {
			switch name {
			case "scheduler", "excludeCIDRs", "strictARP", "tcpTimeout", "tcpFinTimeout", "udpTimeout":
			default:
				c.errs = append(c.errs, field.NotSupported(p.Child("ipvs", name), "", []string{"scheduler", "excludeCIDRs", "strictARP", "tcpTimeout", "tcpFinTimeout", "udpTimeout"}))
			}
		}
	}
	if kp.IPTables != nil && kp.IPVS == nil {
		o.KubeProxy.Mode = "iptables"
	}
	if kp.SkipInstallation {
		if o.CNI.Cilium != nil && o.CNI.Cilium.KubeProxyReplacement {
			return // slipway leaves kube-proxy out when Cilium replaces it
		}
		c.warn(p.Child("skipInstallation"), "not supported: slipway installs kube-proxy unless cni.cilium.kubeProxyReplacement is true")
	}
}

// zero reports whether a generic value is its type's zero (or a zero duration).
func zero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || x == "0s" || x == "0"
	case bool:
		return !x
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return fmt.Sprint(v) == ""
}
