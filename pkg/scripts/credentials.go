package scripts

import (
	"fmt"
	"path"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// The files of NodeCredentials, by name. A script rendered with a CredentialsDir reads each from
// that directory on the host instead of carrying its content.
const (
	// CredentialsContainerdV2 are the registries' credentials as the tables that end
	// /etc/containerd/config.toml for containerd 1.x (config version 2).
	CredentialsContainerdV2 = "containerd-auth-v2.toml"
	// CredentialsContainerdV3 are the same for containerd 2 (config version 3).
	CredentialsContainerdV3 = "containerd-auth-v3.toml"
	// CredentialsProxy is the proxy as containerd's environment file (HTTP_PROXY, HTTPS_PROXY
	// and NO_PROXY lines), which the scripts also export for curl and the package manager.
	CredentialsProxy = "proxy.env"
)

// NodeCredentials returns what of a host's setup may be secret, by file name: the registries'
// credentials (containerRuntime.containerd.registries.*.auth) and the proxy (its URLs may carry
// a user and password). It is empty when the manifest has neither. Prerequisites and
// InstallKubernetes rendered with a CredentialsDir carry none of it and read these files there
// instead, so that their script may be stored where others can read it (a pool machine's
// user-data); what the host ends up with is what the scripts rendered without one write.
func NodeCredentials(c *v1beta1.Cluster) (map[string]string, error) {
	out := map[string]string{}
	regs := registries(c)
	var v2, v3 strings.Builder
	hasAuth, err := writeAuth(&v2, criPluginV2, regs)
	if err != nil {
		return nil, err
	}
	if _, err := writeAuth(&v3, imagesPluginV3, regs); err != nil {
		return nil, err
	}
	if hasAuth {
		out[CredentialsContainerdV2], out[CredentialsContainerdV3] = v2.String(), v3.String()
	}
	proxy, err := proxyFor(c)
	if err != nil {
		return nil, err
	}
	if proxy.set() {
		out[CredentialsProxy] = proxy.environmentFile()
	}
	return out, nil
}

// withoutAuth is regs with every registry's credentials left out: what a script rendered with a
// CredentialsDir writes into config.toml before the credentials file's tables.
func withoutAuth(regs map[string]v1beta1.ContainerdRegistry) map[string]v1beta1.ContainerdRegistry {
	out := make(map[string]v1beta1.ContainerdRegistry, len(regs))
	for k, v := range regs {
		v.Auth = nil
		out[k] = v
	}
	return out
}

// credentialsFile is the path of one of NodeCredentials' files in dir.
func credentialsFile(dir, name string) (string, error) {
	if !path.IsAbs(dir) || path.Clean(dir) != dir {
		return "", fmt.Errorf("credentials directory %q is not a clean absolute path", dir)
	}
	return path.Join(dir, name), nil
}
