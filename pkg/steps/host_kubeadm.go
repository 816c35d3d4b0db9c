package steps

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"time"

	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

// Where slipway keeps the kubeadm configurations it renders. They hold bootstrap tokens and
// certificate keys, so they are root-only.
const (
	kubeadmDir  = "/etc/slipway/kubeadm"
	initConfig  = kubeadmDir + "/init.yaml"
	joinConfig  = kubeadmDir + "/join.yaml"
	apiTimeout  = 5 * time.Minute
	goPreflight = "HTTPProxyCIDR" // see preflightIgnores
)

// preflightIgnores are the kubeadm preflight errors to ignore. HTTPProxyCIDR is always
// ignored: kubeadm binaries built with Go 1.26 fail it on every host (net/url rejects the
// bracketed IPv4 literal kubeadm builds, kubernetes/kubernetes#135013), and slipway sets
// NO_PROXY for the cluster networks itself.
func (e *Env) preflightIgnores() ([]string, error) {
	return kubeadm.PreflightIgnores(e.Cluster, e.cgroupV1(), goPreflight)
}

func (e *Env) cgroupV1() bool {
	for _, f := range e.Facts {
		if f.CgroupVersion == 1 {
			return true
		}
	}
	return false
}

// kubeletParams are the cluster-wide kubelet settings that depend on the hosts.
func (e *Env) kubeletParams() kubeadm.KubeletParams {
	p := kubeadm.KubeletParams{CgroupV1: e.cgroupV1()}
	for _, f := range e.Facts {
		if f.ResolvLoopback {
			p.ResolvConf = kubeletResolvConf
		}
	}
	return p
}

func (e *Env) nodeParams(n *inventory.Node) (kubeadm.NodeParams, error) {
	ignores, err := e.preflightIgnores()
	if err != nil {
		return kubeadm.NodeParams{}, err
	}
	return kubeadm.NodeParams{Host: n.Host, Name: n.Name, IgnorePreflightErrors: ignores}, nil
}

// writeKubeadmFiles uploads a kubeadm configuration and the host's kubelet patch, if any.
func (e *Env) writeKubeadmFiles(ctx context.Context, n *inventory.Node, dst string, cfg []byte) error {
	h := e.Hosts[n.Name]
	if err := h.Command(ctx, "install", "-d", "-m", "0700", path.Dir(dst), kubeadm.PatchesDir).Run(); err != nil {
		return err
	}
	if patch, ok, err := kubeadm.KubeletPatch(n.Host); err != nil {
		return err
	} else if ok {
		if err := h.Upload(ctx, bytes.NewReader(patch), path.Join(kubeadm.PatchesDir, kubeadm.KubeletPatchFile), 0o600, "root"); err != nil {
			return err
		}
	}
	return h.Upload(ctx, bytes.NewReader(cfg), dst, 0o600, "root")
}

// Init runs kubeadm init on the leader and waits for the API.
func (e *Env) Init(ctx context.Context, host string) error {
	n, err := e.Node(host)
	if err != nil {
		return err
	}
	token, err := NewBootstrapToken()
	if err != nil {
		return err
	}
	key, err := NewCertificateKey()
	if err != nil {
		return err
	}
	np, err := e.nodeParams(n)
	if err != nil {
		return err
	}
	cfg, err := kubeadm.InitConfig(e.Cluster, np, e.kubeletParams(), kubeadm.InitSecrets{Token: token, TokenTTL: joinTokenTTL, CertificateKey: key})
	if err != nil {
		return err
	}
	if err := e.writeKubeadmFiles(ctx, n, initConfig, cfg); err != nil {
		return err
	}
	if err := e.Hosts[host].Command(ctx, "kubeadm", "init", "--config", initConfig, "--upload-certs").Run(); err != nil {
		return err
	}
	// The joins that follow in this run use init's token and certificate key.
	e.joinMu.Lock()
	e.joinToken, e.certKey = token, key
	e.joinMu.Unlock()
	e.ResetKube()
	_, err = e.WaitAPI(ctx, apiTimeout)
	return err
}

// InitFinish completes an init that was interrupted: it waits for the API the kubelet brings
// back and re-runs kubeadm's idempotent post-init phases with the configuration init used.
func (e *Env) InitFinish(ctx context.Context, host string) error {
	if _, err := e.WaitAPI(ctx, apiTimeout); err != nil {
		return fmt.Errorf("%w; if the leader never comes up, run `slipway reset` and apply again", err)
	}
	h := e.Hosts[host]
	for _, phase := range [][]string{
		{"upload-config", "all"}, {"upload-certs", "--upload-certs"}, {"mark-control-plane"},
		{"bootstrap-token"}, {"kubelet-finalize", "all"}, {"addon", "all"},
	} {
		args := append([]string{"init", "phase"}, phase...)
		args = append(args, "--config", initConfig)
		if err := h.Command(ctx, "kubeadm", args...).Run(); err != nil {
			return err
		}
	}
	// mark-control-plane waited for the leader's Node, so it exists now. Labels and annotations
	// are not kubeadm's business (a kubelet may not set node-role labels on itself).
	return e.ApplyNodeMetadata(ctx, host)
}

// JoinControlPlane joins a control plane with the run's shared token and certificate key.
func (e *Env) JoinControlPlane(ctx context.Context, host string) error {
	return e.join(ctx, host, true)
}

// JoinWorker joins a static worker.
func (e *Env) JoinWorker(ctx context.Context, host string) error {
	return e.join(ctx, host, false)
}

func (e *Env) join(ctx context.Context, host string, controlPlane bool) error {
	n, c, err := e.nodeAndKube(ctx, host)
	if err != nil {
		return err
	}
	token, key, err := e.joinCredentials(ctx, c, controlPlane)
	if err != nil {
		return err
	}
	hash, err := bootstrap.CACertHash(c.Config.CAData)
	if err != nil {
		return err
	}
	jp := kubeadmJoin(token, hash, controlPlane)
	jp.CertificateKey = key
	np, err := e.nodeParams(n)
	if err != nil {
		return err
	}
	cfg, err := kubeadm.JoinConfig(e.Cluster, np, jp)
	if err != nil {
		return err
	}
	if err := e.writeKubeadmFiles(ctx, n, joinConfig, cfg); err != nil {
		return err
	}
	if err := e.Hosts[host].Command(ctx, "kubeadm", "join", "--config", joinConfig).Run(); err != nil {
		return err
	}
	if err := waitNodeRegistered(ctx, c, n.Name); err != nil {
		return err
	}
	return e.ApplyNodeMetadata(ctx, host)
}

// joinCredentials returns the bootstrap token and, for a control plane, the key of the uploaded
// certificates that the joins of this run share. What init created serves when this run
// initialised the cluster; otherwise the first join creates a token and the first control-plane
// join uploads the certificates again under a new key (kubeadm deletes them two hours after
// init, and an earlier run's key is not known to this one). Joins that follow reuse both, which
// saves each a token's signing and an upload.
func (e *Env) joinCredentials(ctx context.Context, c *kube.Client, controlPlane bool) (token, key string, err error) {
	e.joinMu.Lock()
	defer e.joinMu.Unlock()
	if e.joinToken == "" {
		t, err := CreateJoinToken(ctx, c, "slipway: joins of one apply run")
		if err != nil {
			return "", "", err
		}
		e.joinToken = t
	}
	if !controlPlane {
		return e.joinToken, "", nil
	}
	if e.certKey == "" {
		k, err := NewCertificateKey()
		if err != nil {
			return "", "", err
		}
		leader := e.Leader()
		if err := e.Hosts[leader.Name].Command(ctx, "kubeadm", "init", "phase", "upload-certs", "--upload-certs", "--certificate-key", k).Run(); err != nil {
			return "", "", fmt.Errorf("uploading control-plane certificates from %s: %w", leader.Name, err)
		}
		e.certKey = k
	}
	return e.joinToken, e.certKey, nil
}

func kubeadmJoin(token, hash string, cp bool) kubeadm.JoinParams {
	return kubeadm.JoinParams{Token: token, CACertHashes: []string{hash}, ControlPlane: cp}
}
