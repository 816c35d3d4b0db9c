package kubeadm

import (
	"fmt"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// JoinConfig renders the file for `kubeadm join --config` on a worker or, with
// join.ControlPlane, on a further control-plane host.
func JoinConfig(c *v1beta1.Cluster, node NodeParams, join JoinParams) ([]byte, error) {
	if err := checkToken(join.Token); err != nil {
		return nil, err
	}
	if len(join.CACertHashes) == 0 {
		return nil, fmt.Errorf("no CA certificate hash: a join without one would trust any API server")
	}
	for _, h := range join.CACertHashes {
		if !caHashRE.MatchString(h) {
			return nil, fmt.Errorf("CA certificate hash %q must look like sha256:<64 hex characters>", h)
		}
	}
	if err := checkCertificateKey(join.CertificateKey); err != nil {
		return nil, err
	}
	if join.CertificateKey != "" && !join.ControlPlane {
		return nil, fmt.Errorf("a certificate key is only for control-plane joins")
	}
	endpoint, err := Endpoint(c)
	if err != nil {
		return nil, err
	}
	reg, err := nodeRegistration(c, node, join.ControlPlane)
	if err != nil {
		return nil, err
	}
	cfg := joinConfiguration{
		typeMeta:         typeMeta{APIVersion: kubeadmAPIVersion, Kind: "JoinConfiguration"},
		NodeRegistration: reg,
		Discovery: discovery{BootstrapToken: &bootstrapTokenDiscovery{
			APIServerEndpoint: endpoint,
			Token:             join.Token,
			CACertHashes:      join.CACertHashes,
		}},
		Patches: hostPatches(node.Host),
	}
	if join.ControlPlane {
		cfg.ControlPlane = &joinControlPlane{
			LocalAPIEndpoint: apiEndpoint{AdvertiseAddress: node.Host.PrivateAddress, BindPort: APIServerBindPort},
			CertificateKey:   join.CertificateKey,
		}
	}
	return marshalDocs(cfg)
}
