package kubeadm

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/encryption"
)

// InitConfig renders the file for `kubeadm init --config` on the leader: InitConfiguration,
// ClusterConfiguration, KubeletConfiguration and, unless Cilium replaces it,
// KubeProxyConfiguration. The KubeletConfiguration becomes the cluster-wide kubelet-config
// ConfigMap, so it carries only settings shared by every node; per-host kubelet settings go
// through KubeletPatch.
func InitConfig(c *v1beta1.Cluster, node NodeParams, kubelet KubeletParams, secrets InitSecrets) ([]byte, error) {
	if err := checkToken(secrets.Token); err != nil {
		return nil, err
	}
	return renderInit(c, node, kubelet, secrets)
}

// UploadCertsConfig renders the file for `kubeadm init phase upload-certs --upload-certs
// --config` on the leader: InitConfig's documents with key, which encrypts the certificates the
// phase uploads, and no bootstrap token (the phase creates none). kubeadm takes the key from
// this file, so it never travels on a command line, where ps, sudo's log and error messages
// would show it.
func UploadCertsConfig(c *v1beta1.Cluster, node NodeParams, kubelet KubeletParams, key string) ([]byte, error) {
	if key == "" {
		return nil, fmt.Errorf("uploading certificates needs a certificate key")
	}
	return renderInit(c, node, kubelet, InitSecrets{CertificateKey: key})
}

// ControlPlaneConfig renders the file for the kubeadm phases that rewrite what a running
// cluster's control plane is configured with from the manifest, with no secret in it:
// `kubeadm init phase upload-config kubeadm --config` (the cluster's ClusterConfiguration, which
// later joins and upgrades read) and `kubeadm init phase control-plane apiserver --config` (a
// control plane's kube-apiserver static pod, which the kubelet then restarts).
func ControlPlaneConfig(c *v1beta1.Cluster, node NodeParams, kubelet KubeletParams) ([]byte, error) {
	return renderInit(c, node, kubelet, InitSecrets{})
}

// renderInit renders the init documents; secrets.Token may be empty for no bootstrap token.
func renderInit(c *v1beta1.Cluster, node NodeParams, kubelet KubeletParams, secrets InitSecrets) ([]byte, error) {
	if err := checkCertificateKey(secrets.CertificateKey); err != nil {
		return nil, err
	}
	reg, err := nodeRegistration(c, node, true)
	if err != nil {
		return nil, err
	}
	var tokens []bootstrapToken
	if secrets.Token != "" {
		token := bootstrapToken{Token: secrets.Token, Description: "slipway: joins nodes to the cluster"}
		if secrets.TokenTTL > 0 {
			token.TTL = secrets.TokenTTL.String()
		}
		tokens = append(tokens, token)
	}
	initCfg := initConfiguration{
		typeMeta:         typeMeta{APIVersion: kubeadmAPIVersion, Kind: "InitConfiguration"},
		BootstrapTokens:  tokens,
		NodeRegistration: reg,
		LocalAPIEndpoint: apiEndpoint{AdvertiseAddress: node.Host.PrivateAddress, BindPort: APIServerBindPort},
		CertificateKey:   secrets.CertificateKey,
		Patches:          hostPatches(node.Host),
	}
	clusterCfg, err := clusterConfig(c)
	if err != nil {
		return nil, err
	}
	kubeletCfg, err := kubeletConfig(c, kubelet)
	if err != nil {
		return nil, err
	}
	docs := []any{initCfg, clusterCfg, kubeletCfg}
	if !clusterCfg.Proxy.Disabled {
		kp := kubeProxyConfiguration{
			typeMeta:    typeMeta{APIVersion: kubeProxyAPIVersion, Kind: "KubeProxyConfiguration"},
			Mode:        c.ClusterNetwork.KubeProxy.Mode,
			ClusterCIDR: c.ClusterNetwork.PodSubnet,
		}
		if m := c.ClusterNetwork.KubeProxy.ConntrackMaxPerCore; m != nil {
			kp.Conntrack = &kubeProxyConntrack{MaxPerCore: m}
		}
		docs = append(docs, kp)
	}
	return marshalDocs(docs...)
}

// Endpoint is the controlPlaneEndpoint, host:port, that nodes and clients use.
func Endpoint(c *v1beta1.Cluster) (string, error) {
	if c.APIEndpoint.Host == "" {
		return "", fmt.Errorf("apiEndpoint.host is empty (it is required with more than one control-plane host)")
	}
	port := c.APIEndpoint.Port
	if port == 0 {
		port = v1beta1.DefaultAPIPort
	}
	return net.JoinHostPort(c.APIEndpoint.Host, strconv.Itoa(port)), nil
}

func clusterConfig(c *v1beta1.Cluster) (clusterConfiguration, error) {
	v, err := version(c)
	if err != nil {
		return clusterConfiguration{}, err
	}
	endpoint, err := Endpoint(c)
	if err != nil {
		return clusterConfiguration{}, err
	}
	n := c.ClusterNetwork
	cfg := clusterConfiguration{
		typeMeta:             typeMeta{APIVersion: kubeadmAPIVersion, Kind: "ClusterConfiguration"},
		ClusterName:          c.Name,
		KubernetesVersion:    "v" + v.String(),
		ControlPlaneEndpoint: endpoint,
		Networking:           networking{ServiceSubnet: n.ServiceSubnet, PodSubnet: n.PodSubnet, DNSDomain: n.ServiceDomainName},
		APIServer: apiServer{
			ExtraArgs: []arg{{Name: "service-node-port-range", Value: n.NodePortRange}},
			CertSANs:  certSANs(c),
		},
		Etcd:  etcd{Local: &localEtcd{DataDir: "/var/lib/etcd"}},
		Proxy: proxy{Disabled: proxyDisabled(c)},
	}
	if r := c.RegistryConfiguration; r != nil && r.OverwriteRegistry != "" {
		cfg.ImageRepository = r.OverwriteRegistry
	}
	if servers := etcdServers(c); servers != "" {
		cfg.APIServer.ExtraArgs = append(cfg.APIServer.ExtraArgs, arg{Name: "etcd-servers", Value: servers})
	}
	if c.Encryption.Enabled {
		encryptSecrets(&cfg.APIServer)
	}
	return cfg, nil
}

// etcdServers lists the client URL of every control plane's etcd member for the API servers'
// --etcd-servers when there is more than one control plane, and is empty otherwise (kubeadm's
// default, the local member alone). kubeadm points each API server at its local member only, so
// that while this member restarts (in every kubeadm upgrade, and whenever its manifest
// changes) the local API server cannot read or write, and the kubelet, which reports to its
// local API server, stalls on it: about a minute per control plane in an upgrade. With every
// member listed, etcd's client spreads requests over the members it is connected to and moves
// on from one that goes away (or is still a learner), so the API server keeps serving. Every
// member's serving certificate names its private address, which is what it advertises.
func etcdServers(c *v1beta1.Cluster) string {
	hosts := c.ControlPlane.Hosts
	if len(hosts) < 2 {
		return ""
	}
	urls := make([]string, len(hosts))
	for i, h := range hosts {
		urls[i] = "https://" + net.JoinHostPort(h.PrivateAddress, strconv.Itoa(EtcdClientPort))
	}
	return strings.Join(urls, ",")
}

// encryptSecrets points the API server at the encryption configuration (package encryption
// owns the file), mounted read-only from the control plane: the whole directory, not the file,
// because slipway replaces the file by renaming a new one over it, which a file mount would not
// follow. With automatic reload the API server reads the file again when it changes (kube-apiserver
// checks once a minute), so a key rotation needs no restart.
func encryptSecrets(a *apiServer) {
	a.ExtraArgs = append(a.ExtraArgs,
		arg{Name: "encryption-provider-config", Value: encryption.File},
		arg{Name: "encryption-provider-config-automatic-reload", Value: "true"})
	a.ExtraVolumes = append(a.ExtraVolumes, hostPathMount{
		Name: "encryption-config", HostPath: encryption.Dir, MountPath: encryption.Dir, ReadOnly: true, PathType: "DirectoryOrCreate",
	})
}

// certSANs lists every name the API server certificate must carry beyond what kubeadm adds
// itself: the endpoint, the manifest's alternative names and every address and hostname of
// every control-plane host, so that any of them can serve behind the endpoint.
func certSANs(c *v1beta1.Cluster) []string {
	var sans []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			sans = append(sans, s)
		}
	}
	add(c.APIEndpoint.Host)
	for _, s := range c.APIEndpoint.AlternativeNames {
		add(s)
	}
	for _, h := range c.ControlPlane.Hosts {
		add(h.PublicAddress)
		add(h.PrivateAddress)
		add(h.Hostname)
	}
	return sans
}
