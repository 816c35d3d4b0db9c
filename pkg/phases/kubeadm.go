package phases

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"time"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

// Where slipway puts the kubeadm configurations it renders, for as long as kubeadm runs (see
// kubeadmWithConfig). They hold bootstrap tokens and certificate keys, so they are root-only,
// and the prerequisites remove any that a killed run left.
const (
	kubeadmDir    = scripts.KubeadmConfigDir
	initConfig    = kubeadmDir + "/init.yaml"
	joinConfig    = kubeadmDir + "/join.yaml"
	upgradeConfig = kubeadmDir + "/upgrade.yaml"
	uploadConfig  = kubeadmDir + "/upload-certs.yaml"
	apiTimeout    = 5 * time.Minute
)

// KubeletParams are the cluster-wide kubelet settings that depend on what the hosts reported:
// cgroup v1 on any host, and a loopback-only resolv.conf on any host.
func (r *Run) KubeletParams() kubeadm.KubeletParams {
	var p kubeadm.KubeletParams
	for _, f := range r.cfg.Facts {
		if f.CgroupVersion == 1 {
			p.CgroupV1 = true
		}
		if f.ResolvLoopback {
			p.ResolvConf = scripts.KubeletResolvConf
		}
	}
	return p
}

// NodeParams are the kubeadm settings of one host (kubeadm.HTTPProxyCIDRPreflight is always
// among the preflight errors ignored).
func (r *Run) NodeParams(n Node) (kubeadm.NodeParams, error) {
	ignores, err := kubeadm.PreflightIgnores(r.cfg.Manifest, r.KubeletParams().CgroupV1, kubeadm.HTTPProxyCIDRPreflight)
	if err != nil {
		return kubeadm.NodeParams{}, err
	}
	return kubeadm.NodeParams{Host: n.Host, Name: n.Name, IgnorePreflightErrors: ignores}, nil
}

// kubeadmWithConfig puts cfg at dst on n (mode 0600, with n's kubelet patch), runs kubeadm
// once per argument list with --config dst added, and removes dst again whether kubeadm
// succeeded, failed or was interrupted: the file holds the bootstrap token and certificate key
// that kubeadm reads from it, which travel on no command line and must not outlive their use.
// A run killed outright leaves the file behind, root-only, until the next run's prerequisites
// (or its own use of the file) remove it.
func kubeadmWithConfig(ctx context.Context, n Node, dst string, cfg []byte, runs ...[]string) (err error) {
	defer func() {
		// Also after a cancel: the connection usually still works for this.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if rerr := n.SSH.Command(rctx, "rm", "-f", dst).Run(); rerr != nil && err == nil {
			err = fmt.Errorf("removing %s, which holds secrets, on %s: %w", dst, n.Name, rerr)
		}
	}()
	if err := writeKubeadmFiles(ctx, n, dst, cfg); err != nil {
		return err
	}
	for _, args := range runs {
		if err := n.SSH.Command(ctx, "kubeadm", append(args, "--config", dst)...).Run(); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeadmFiles uploads a kubeadm configuration to dst on n, and n's kubelet patch, if any.
func writeKubeadmFiles(ctx context.Context, n Node, dst string, cfg []byte) error {
	if err := n.SSH.Command(ctx, "install", "-d", "-m", "0700", path.Dir(dst), kubeadm.PatchesDir).Run(); err != nil {
		return err
	}
	if patch, ok, err := kubeadm.KubeletPatch(n.Host); err != nil {
		return err
	} else if ok {
		if err := n.SSH.Upload(ctx, bytes.NewReader(patch), path.Join(kubeadm.PatchesDir, kubeadm.KubeletPatchFile), 0o600, "root"); err != nil {
			return err
		}
	}
	return n.SSH.Upload(ctx, bytes.NewReader(cfg), dst, 0o600, "root")
}
