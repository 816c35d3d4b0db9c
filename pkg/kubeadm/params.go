package kubeadm

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// Paths on the hosts that the rendered files refer to. The caller writes the files there.
const (
	// CRISocket is containerd's CRI endpoint, the only runtime slipway configures.
	CRISocket = "unix:///run/containerd/containerd.sock"
	// PatchesDir holds the kubeadm patches of one host (see KubeletPatch). Init, join and
	// upgrade configurations point kubeadm at it when the host has kubelet settings of its own.
	PatchesDir = "/etc/slipway/kubeadm-patches"
	// APIServerBindPort is where every control-plane node's API server listens.
	APIServerBindPort = 6443
	// EtcdClientPort is where every control plane's stacked etcd member serves clients.
	EtcdClientPort = 2379
)

// NodeParams identify the host a configuration is rendered for.
type NodeParams struct {
	// Host is the host's entry in the loaded (defaulted) manifest.
	Host v1beta1.Host
	// Name is the hostname probed over SSH. It names the Node when the manifest gives no
	// hostname; the manifest's hostname wins otherwise.
	Name string
	// IgnorePreflightErrors are kubeadm preflight checks reported as warnings instead of errors
	// (see PreflightIgnores).
	IgnorePreflightErrors []string
}

// KubeletParams are cluster-wide kubelet settings that depend on what the hosts look like.
type KubeletParams struct {
	// ResolvConf is the resolver file the kubelet gives to pods with dnsPolicy Default, CoreDNS
	// included. Empty keeps the kubelet's default (/etc/resolv.conf, or systemd-resolved's file,
	// which kubeadm detects). Hosts whose /etc/resolv.conf names only loopback servers need a file
	// with real upstream servers, or CoreDNS forwards to itself.
	ResolvConf string
	// CgroupV1 says that the hosts run cgroup v1. Kubelets from 1.35 on refuse to start there
	// unless their configuration says failCgroupV1: false.
	CgroupV1 bool
}

// InitSecrets are the secrets of kubeadm init, created by the caller.
type InitSecrets struct {
	// Token is a bootstrap token (abcdef.0123456789abcdef) that joining nodes use.
	Token string
	// TokenTTL is how long the token lives. Zero means kubeadm's default (24h).
	TokenTTL time.Duration
	// CertificateKey encrypts the control-plane certificates that kubeadm uploads to the
	// kubeadm-certs Secret (64 hex characters). Empty means the certificates are not uploaded
	// and the caller copies them to joining control planes itself.
	CertificateKey string
}

// JoinParams are what a joining node needs to find and trust the cluster.
type JoinParams struct {
	// Token is a bootstrap token (abcdef.0123456789abcdef).
	Token string
	// CACertHashes pin the cluster CA: "sha256:<hex of the CA's public key info>".
	CACertHashes []string
	// ControlPlane joins the node as a control plane with a stacked etcd member.
	ControlPlane bool
	// CertificateKey decrypts the uploaded control-plane certificates; control planes only. Empty
	// means the caller copied the certificates to the host before the join.
	CertificateKey string
}

var (
	tokenRE    = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)
	caHashRE   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	errTokenFm = "bootstrap token must look like abcdef.0123456789abcdef (6 and 16 characters from a-z and 0-9)"
)

func checkToken(token string) error {
	if !tokenRE.MatchString(token) {
		return fmt.Errorf("%s", errTokenFm)
	}
	return nil
}

func checkCertificateKey(key string) error {
	if key == "" {
		return nil
	}
	if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
		return fmt.Errorf("certificate key must be 64 hexadecimal characters (32 bytes)")
	}
	return nil
}

// nodeName returns the Node name for p or an error saying why there is none.
func (p NodeParams) nodeName() (string, error) {
	name := p.Host.Hostname
	if name == "" {
		name = p.Name
	}
	if name == "" {
		return "", fmt.Errorf("host %s: no node name: the manifest has no hostname and none was probed", p.Host.PublicAddress)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("host %s: node name %q: %s", p.Host.PublicAddress, name, strings.Join(errs, "; "))
	}
	return name, nil
}

// version returns the cluster's Kubernetes version, checked against the supported window.
func version(c *v1beta1.Cluster) (*semver.Version, error) {
	v, err := v1beta1.ParseKubernetesVersion(c.Versions.Kubernetes)
	if err != nil {
		return nil, fmt.Errorf("versions.kubernetes %q: %w", c.Versions.Kubernetes, err)
	}
	return v, nil
}
