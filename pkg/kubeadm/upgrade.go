package kubeadm

import (
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// UpgradeConfig renders the file for `kubeadm upgrade apply --config` (first control plane) and
// `kubeadm upgrade node --config` (every other node) to the cluster's version. Run apply with
// --yes: the configuration has no field for it. The host's kubelet patch directory is named
// again, because kubeadm rewrites the node's kubelet configuration during the upgrade.
func UpgradeConfig(c *v1beta1.Cluster, node NodeParams) ([]byte, error) {
	v, err := version(c)
	if err != nil {
		return nil, err
	}
	yes := true
	cfg := upgradeConfiguration{
		typeMeta: typeMeta{APIVersion: kubeadmAPIVersion, Kind: "UpgradeConfiguration"},
		Apply: upgradeApply{
			KubernetesVersion:     "v" + v.String(),
			CertificateRenewal:    &yes,
			EtcdUpgrade:           &yes,
			IgnorePreflightErrors: node.IgnorePreflightErrors,
			Patches:               hostPatches(node.Host),
		},
		Node: upgradeNode{
			CertificateRenewal:    &yes,
			EtcdUpgrade:           &yes,
			IgnorePreflightErrors: node.IgnorePreflightErrors,
			Patches:               hostPatches(node.Host),
		},
	}
	return marshalDocs(cfg)
}
