package kubeadm

import (
	"fmt"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// DefaultImageRepository is where kubeadm pulls control-plane images from unless the manifest
// overwrites the registry.
const DefaultImageRepository = "registry.k8s.io"

// minorImages are the etcd, CoreDNS and pause tags each kubeadm minor asks for (kubeadm's
// constants.go: DefaultEtcdVersion, CoreDNSVersion, PauseVersion).
var minorImages = map[uint64]struct{ etcd, coreDNS, pause string }{
	35: {"3.6.6-0", "v1.13.1", "3.10.1"},
	36: {"3.6.8-0", "v1.14.2", "3.10.2"},
	37: {"3.7.0-0", "v1.14.6", "3.10.2"},
}

// PauseImage is the pod sandbox image for containerd's sandbox_image: the one kubeadm expects,
// so that its preflight check and the kubelet agree with containerd.
func PauseImage(c *v1beta1.Cluster) (string, error) {
	imgs, err := Images(c)
	if err != nil {
		return "", err
	}
	return imgs[len(imgs)-1], nil
}

// EtcdImage is the etcd image kubeadm runs for the cluster: a restore runs its etcdutl, so that
// the data it writes is of the version that will read it.
func EtcdImage(c *v1beta1.Cluster) (string, error) {
	imgs, err := Images(c)
	if err != nil {
		return "", err
	}
	for _, img := range imgs {
		if strings.Contains(img, "/etcd:") {
			return img, nil
		}
	}
	return "", fmt.Errorf("kubeadm lists no etcd image for the cluster")
}

// Images lists the control-plane images kubeadm pulls for the cluster's version, the pause
// image last, so that sandboxes and air-gapped sites can preload them. Like kubeadm, it drops
// CoreDNS's extra path element when the registry is overwritten, and kube-proxy's image when
// the ClusterConfiguration disables kube-proxy (Cilium's kube-proxy replacement).
func Images(c *v1beta1.Cluster) ([]string, error) {
	v, err := version(c)
	if err != nil {
		return nil, err
	}
	tags, ok := minorImages[v.Minor()]
	if !ok {
		return nil, fmt.Errorf("no image versions known for Kubernetes v1.%d", v.Minor())
	}
	repo, coreDNS := DefaultImageRepository, DefaultImageRepository+"/coredns/coredns"
	if r := c.RegistryConfiguration; r != nil && r.OverwriteRegistry != "" {
		repo, coreDNS = r.OverwriteRegistry, r.OverwriteRegistry+"/coredns"
	}
	k := "v" + v.String()
	imgs := []string{}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		if name == "kube-proxy" && proxyDisabled(c) {
			continue
		}
		imgs = append(imgs, repo+"/"+name+":"+k)
	}
	return append(imgs,
		coreDNS+":"+tags.coreDNS,
		repo+"/etcd:"+tags.etcd,
		repo+"/pause:"+tags.pause,
	), nil
}

// proxyDisabled reports whether kubeadm leaves kube-proxy out: Cilium replaces it.
func proxyDisabled(c *v1beta1.Cluster) bool {
	cilium := c.ClusterNetwork.CNI.Cilium
	return cilium != nil && cilium.KubeProxyReplacement
}

// HTTPProxyCIDRPreflight is a preflight check slipway always ignores: kubeadm binaries built with
// Go 1.26 fail it on every host (net/url rejects the bracketed IPv4 literal kubeadm builds,
// kubernetes/kubernetes#135013), and slipway sets NO_PROXY for the cluster networks itself.
const HTTPProxyCIDRPreflight = "HTTPProxyCIDR"

// PreflightIgnores lists the preflight errors kubeadm must ignore to init, join or upgrade to
// the cluster's version: SystemVerification on cgroup v1 hosts from 1.35 on, because kubeadm
// checks the host against the new kubelet's cgroup v1 policy without reading failCgroupV1.
// extra (for example HTTPProxyCIDR for kubeadm binaries built with Go 1.26) is appended.
func PreflightIgnores(c *v1beta1.Cluster, cgroupV1 bool, extra ...string) ([]string, error) {
	v, err := version(c)
	if err != nil {
		return nil, err
	}
	var out []string
	if cgroupV1 && v.Minor() >= failCgroupV1Minor {
		out = append(out, "SystemVerification")
	}
	return append(out, extra...), nil
}
