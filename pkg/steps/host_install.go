package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/scripts"
)

const kubeletResolvConf = scripts.KubeletResolvConf

// PrereqHashFile records on each host the hash of the prerequisites script it last ran, so
// that a changed manifest (registries, proxy) runs it again and an unchanged one does not.
const PrereqHashFile = "/etc/slipway/prerequisites.sha256"

// Prerequisites prepares a host for kubeadm: swap, kernel modules, sysctls and containerd.
func (e *Env) Prerequisites(ctx context.Context, host string) error {
	script, err := e.PrereqScript(host)
	if err != nil {
		return err
	}
	if err := e.Hosts[host].Script(ctx, "prerequisites", script).Run(); err != nil {
		return err
	}
	return e.Hosts[host].Upload(ctx, strings.NewReader(Hash([]byte(script))+"\n"), PrereqHashFile, 0o644, "root")
}

// PrereqScript renders the prerequisites script of a probed host. It may hold registry
// credentials: never log it.
func (e *Env) PrereqScript(host string) (string, error) {
	sandbox, err := kubeadm.PauseImage(e.Cluster)
	if err != nil {
		return "", err
	}
	cas := map[string][]byte{}
	for name, r := range e.Cluster.ContainerRuntime.Containerd.Registries {
		if r.TLSConfig != nil && r.TLSConfig.CAFile != "" {
			data, err := os.ReadFile(r.TLSConfig.CAFile)
			if err != nil {
				return "", fmt.Errorf("containerRuntime.containerd.registries[%s].tlsConfig.caFile: %w", name, err)
			}
			cas[name] = data
		}
	}
	return scripts.Prerequisites(e.Facts[host].OS, scripts.PrereqParams{
		Cluster: e.Cluster, SandboxImage: sandbox, RegistryCAs: cas, UpstreamDNS: e.Cluster.ClusterNetwork.UpstreamDNS,
	})
}

// InstallKubernetes installs kubeadm, kubelet and kubectl at the manifest's version, uploading
// them first when the manifest's assets say so.
func (e *Env) InstallKubernetes(ctx context.Context, host string) error {
	return e.installBinaries(ctx, host)
}

func (e *Env) installBinaries(ctx context.Context, host string) error {
	f := e.Facts[host]
	arch, err := f.GoArch()
	if err != nil {
		return err
	}
	if up := e.Cluster.Assets.Upload; up != nil {
		if err := e.uploadBinaries(ctx, host, up.Directory); err != nil {
			return err
		}
	}
	script, err := scripts.InstallKubernetes(f.OS, scripts.InstallParams{Cluster: e.Cluster, Arch: arch})
	if err != nil {
		return err
	}
	return e.Hosts[host].Script(ctx, "install-kubernetes", script).Run()
}

// uploadBinaries copies kubeadm, kubelet and kubectl (and their .sha256 files when present)
// from the operator's directory to the host's upload directory, streaming each file.
func (e *Env) uploadBinaries(ctx context.Context, host, dir string) error {
	dst := scripts.UploadDir("v" + strings.TrimPrefix(e.Cluster.Versions.Kubernetes, "v"))
	for _, name := range []string{"kubeadm", "kubelet", "kubectl"} {
		for _, file := range []string{name, name + ".sha256"} {
			src := filepath.Join(dir, file)
			f, err := os.Open(src)
			if os.IsNotExist(err) && file != name {
				continue
			}
			if err != nil {
				return fmt.Errorf("assets.upload.directory: %w", err)
			}
			err = e.Hosts[host].Upload(ctx, f, filepath.Join(dst, file), 0o755, "root")
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}
