package kubeadm_test

import (
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

func TestRejects(t *testing.T) {
	c := load(t, "single")
	cp, worker := c.ControlPlane.Hosts[0], c.StaticWorkers.Hosts[0]
	join := kubeadm.JoinParams{Token: token, CACertHashes: []string{caHash}}
	tests := []struct {
		name    string
		render  func() ([]byte, error)
		wantErr string
	}{
		{"bad token", func() ([]byte, error) {
			return kubeadm.InitConfig(c, node(cp), kubeadm.KubeletParams{}, kubeadm.InitSecrets{Token: "abc.def"})
		}, "bootstrap token must look like"},
		{"token with newline", func() ([]byte, error) {
			return kubeadm.InitConfig(c, node(cp), kubeadm.KubeletParams{}, kubeadm.InitSecrets{Token: token + "\nx: y"})
		}, "bootstrap token must look like"},
		{"short certificate key", func() ([]byte, error) {
			return kubeadm.InitConfig(c, node(cp), kubeadm.KubeletParams{}, kubeadm.InitSecrets{Token: token, CertificateKey: "abcd"})
		}, "certificate key must be 64 hexadecimal"},
		{"upload-certs without a key", func() ([]byte, error) {
			return kubeadm.UploadCertsConfig(c, node(cp), kubeadm.KubeletParams{}, "")
		}, "needs a certificate key"},
		{"no node name", func() ([]byte, error) {
			return kubeadm.JoinConfig(c, kubeadm.NodeParams{Host: worker}, join)
		}, "no node name"},
		{"uppercase node name", func() ([]byte, error) {
			return kubeadm.JoinConfig(c, kubeadm.NodeParams{Host: worker, Name: "Worker_1"}, join)
		}, `node name "Worker_1"`},
		{"no CA hash", func() ([]byte, error) {
			return kubeadm.JoinConfig(c, node(worker), kubeadm.JoinParams{Token: token})
		}, "no CA certificate hash"},
		{"bad CA hash", func() ([]byte, error) {
			return kubeadm.JoinConfig(c, node(worker), kubeadm.JoinParams{Token: token, CACertHashes: []string{"md5:abc"}})
		}, "must look like sha256:"},
		{"certificate key on a worker", func() ([]byte, error) {
			return kubeadm.JoinConfig(c, node(worker), kubeadm.JoinParams{Token: token, CACertHashes: []string{caHash}, CertificateKey: certKey})
		}, "only for control-plane joins"},
		{"unsupported version", func() ([]byte, error) {
			bad := *c
			bad.Versions.Kubernetes = "v1.32.0"
			return kubeadm.UpgradeConfig(&bad, node(cp))
		}, "unsupported version"},
		{"no endpoint", func() ([]byte, error) {
			bad := *c
			bad.APIEndpoint.Host = ""
			return kubeadm.JoinConfig(&bad, node(worker), join)
		}, "apiEndpoint.host is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.render()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q; output:\n%s", err, tt.wantErr, out)
			}
		})
	}
}

func TestPreflightIgnores(t *testing.T) {
	tests := []struct {
		name     string
		version  string
		cgroupV1 bool
		extra    []string
		want     string
	}{
		{"cgroup v2", "v1.37.2", false, nil, ""},
		{"cgroup v1", "v1.37.2", true, nil, "SystemVerification"},
		{"oldest minor on cgroup v1", "v1.35.4", true, nil, "SystemVerification"},
		{"extra kept", "v1.37.2", true, []string{"HTTPProxyCIDR"}, "SystemVerification,HTTPProxyCIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, "single")
			c.Versions.Kubernetes = tt.version
			got, err := kubeadm.PreflightIgnores(c, tt.cgroupV1, tt.extra...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("PreflightIgnores = %v, want %q", got, tt.want)
			}
		})
	}
}

func TestImages(t *testing.T) {
	tests := []struct {
		cluster, version string
		want             []string
		absent           string
	}{
		{"single", "v1.36.3", []string{"registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/coredns/coredns:v1.14.2",
			"registry.k8s.io/etcd:3.6.8-0", "registry.k8s.io/pause:3.10.2"}, ""},
		{"single", "v1.35.4", []string{"registry.k8s.io/coredns/coredns:v1.13.1", "registry.k8s.io/etcd:3.6.6-0", "registry.k8s.io/pause:3.10.1"}, ""},
		{"ha", "v1.37.2", []string{"registry.example.com:5000/k8s/kube-proxy:v1.37.2", "registry.example.com:5000/k8s/coredns:v1.14.6",
			"registry.example.com:5000/k8s/etcd:3.7.0-0", "registry.example.com:5000/k8s/pause:3.10.2"}, ""},
		// Cilium replaces kube-proxy: kubeadm, told proxy.disabled, does not pull its image.
		{"cilium", "v1.36.3", []string{"registry.k8s.io/kube-apiserver:v1.36.3", "registry.k8s.io/pause:3.10.2"}, "kube-proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.cluster+"-"+tt.version, func(t *testing.T) {
			c := load(t, tt.cluster)
			c.Versions.Kubernetes = tt.version
			got, err := kubeadm.Images(c)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(got, " ")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("Images() = %v, lacks %s", got, w)
				}
			}
			if tt.absent != "" && strings.Contains(all, "/"+tt.absent+":") {
				t.Errorf("Images() = %v, lists %s", got, tt.absent)
			}
			pause, _ := kubeadm.PauseImage(c)
			if pause != got[len(got)-1] || !strings.Contains(pause, "/pause:") {
				t.Errorf("PauseImage() = %q, want the pause image of %v", pause, got)
			}
		})
	}
}

func TestPatchKubeletConfig(t *testing.T) {
	// What kubeadm 1.34 keeps in the kubelet-config ConfigMap (abridged).
	const fromCluster = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  webhook:
    enabled: true
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
kind: KubeletConfiguration
rotateCertificates: true
serverTLSBootstrap: true
`
	tests := []struct {
		name        string
		version     string
		params      kubeadm.KubeletParams
		wantChanged bool
		want        []string
	}{
		{"cgroup v1", "v1.37.2", kubeadm.KubeletParams{CgroupV1: true}, true, []string{"failCgroupV1: false", "clusterDNS:", "rotateCertificates: true"}},
		{"cgroup v2 converged", "v1.37.2", kubeadm.KubeletParams{}, false, nil},
		{"resolvConf", "v1.36.3", kubeadm.KubeletParams{ResolvConf: "/etc/slipway/resolv.conf"}, true, []string{"resolvConf: /etc/slipway/resolv.conf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := load(t, "single")
			c.Versions.Kubernetes = tt.version
			out, changed, err := kubeadm.PatchKubeletConfig([]byte(fromCluster), c, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Fatalf("changed = %v, want %v:\n%s", changed, tt.wantChanged, out)
			}
			if !changed && string(out) != fromCluster {
				t.Errorf("unchanged config was rewritten:\n%s", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("patched config lacks %q:\n%s", w, out)
				}
			}
			if changed {
				// A second pass over the result is a no-op: re-apply converges.
				if _, again, err := kubeadm.PatchKubeletConfig(out, c, tt.params); err != nil || again {
					t.Errorf("second PatchKubeletConfig: changed %v, err %v", again, err)
				}
			}
		})
	}
	if _, _, err := kubeadm.PatchKubeletConfig([]byte("kind: ConfigMap\n"), load(t, "single"), kubeadm.KubeletParams{}); err == nil {
		t.Error("PatchKubeletConfig accepted a document that is not a KubeletConfiguration")
	}
}
