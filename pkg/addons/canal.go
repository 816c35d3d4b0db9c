package addons

import (
	"encoding/json"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// calicoCRD is one custom resource Calico reads or writes. Calico's own CRDs carry full
// schemas; slipway's keep the names and scopes but an open schema, which is all the API server
// needs to store the objects: Calico validates them itself.
type calicoCRD struct {
	Group, Version, Plural, Kind string
	Namespaced, Status           bool
	// Approval is the api-approved.kubernetes.io annotation that *.k8s.io groups require.
	Approval string
}

// calicoCRDs are the resources calico-node (policy only) and calico-kube-controllers 3.30 use.
var calicoCRDs = func() []calicoCRD {
	var out []calicoCRD
	for _, r := range []struct {
		plural, kind       string
		namespaced, status bool
	}{
		{"bgpconfigurations", "BGPConfiguration", false, false},
		{"bgpfilters", "BGPFilter", false, false},
		{"bgppeers", "BGPPeer", false, false},
		{"blockaffinities", "BlockAffinity", false, false},
		{"caliconodestatuses", "CalicoNodeStatus", false, true},
		{"clusterinformations", "ClusterInformation", false, false},
		{"felixconfigurations", "FelixConfiguration", false, false},
		{"globalnetworkpolicies", "GlobalNetworkPolicy", false, false},
		{"globalnetworksets", "GlobalNetworkSet", false, false},
		{"hostendpoints", "HostEndpoint", false, false},
		{"ipamblocks", "IPAMBlock", false, false},
		{"ipamconfigs", "IPAMConfig", false, false},
		{"ipamhandles", "IPAMHandle", false, false},
		{"ippools", "IPPool", false, false},
		{"ipreservations", "IPReservation", false, false},
		{"kubecontrollersconfigurations", "KubeControllersConfiguration", false, true},
		{"networkpolicies", "NetworkPolicy", true, false},
		{"networksets", "NetworkSet", true, false},
		{"stagedglobalnetworkpolicies", "StagedGlobalNetworkPolicy", false, false},
		{"stagedkubernetesnetworkpolicies", "StagedKubernetesNetworkPolicy", true, false},
		{"stagednetworkpolicies", "StagedNetworkPolicy", true, false},
		{"tiers", "Tier", false, false},
	} {
		out = append(out, calicoCRD{Group: "crd.projectcalico.org", Version: "v1", Plural: r.plural, Kind: r.kind,
			Namespaced: r.namespaced, Status: r.status})
	}
	// Calico watches the admin network policies of sig-network's network-policy-api.
	for _, r := range [][2]string{{"adminnetworkpolicies", "AdminNetworkPolicy"}, {"baselineadminnetworkpolicies", "BaselineAdminNetworkPolicy"}} {
		out = append(out, calicoCRD{Group: "policy.networking.k8s.io", Version: "v1alpha1", Plural: r[0], Kind: r[1], Status: true,
			Approval: "https://github.com/kubernetes-sigs/network-policy-api/pull/30"})
	}
	return out
}()

func (v *values) canal(c *v1beta1.Cluster) error {
	v.MTU = c.ClusterNetwork.CNI.Canal.MTU
	if v.MTU < 576 || v.MTU > 9000 {
		return fmt.Errorf("canal MTU %d is outside 576-9000", v.MTU)
	}
	var err error
	if v.NetConf, err = netConf(v.PodSubnet, "vxlan"); err != nil {
		return err
	}
	// Calico's CNI plugin enforces policy and takes addresses from the node's podCIDR; the
	// __PLACEHOLDERS__ are filled in per node by Calico's install-cni.
	conf, err := json.MarshalIndent(map[string]any{
		"name":       "k8s-pod-network",
		"cniVersion": "0.3.1",
		"plugins": []any{
			map[string]any{
				"type":           "calico",
				"log_level":      "info",
				"log_file_path":  "/var/log/calico/cni/cni.log",
				"datastore_type": "kubernetes",
				"nodename":       "__KUBERNETES_NODE_NAME__",
				"mtu":            v.MTU,
				"ipam":           map[string]string{"type": "host-local", "subnet": "usePodCidr"},
				"policy":         map[string]string{"type": "k8s"},
				"kubernetes":     map[string]string{"kubeconfig": "__KUBECONFIG_FILEPATH__"},
			},
			map[string]any{"type": "portmap", "snat": true, "capabilities": map[string]bool{"portMappings": true}},
			map[string]any{"type": "bandwidth", "capabilities": map[string]bool{"bandwidth": true}},
		},
	}, "", "  ")
	v.CanalCNIConf = string(conf)
	v.CalicoCRDs = calicoCRDs
	return err
}
