package v1beta1

// ContainerRuntime configures the container runtime.
type ContainerRuntime struct {
	// Containerd is the only supported runtime.
	Containerd Containerd `json:"containerd,omitzero"`
}

// Containerd configures containerd.
type Containerd struct {
	// Registries configures image registries by name (e.g. docker.io, registry.k8s.io or "*" for
	// every registry): mirrors to try first, TLS and credentials.
	Registries map[string]ContainerdRegistry `json:"registries,omitempty"`
	// Release is where slipway downloads containerd's release tarball on a node that has no
	// containerd, or one older than the Kubernetes version needs (containerd 2 from v1.36 on):
	// <baseURL>/v<version>/containerd-<version>-linux-<arch>.tar.gz, verified against its
	// .sha256sum file. A node whose containerd is new enough keeps it.
	Release ContainerdRelease `json:"release,omitzero"`
}

// ContainerdRelease is a web server laid out like containerd's GitHub releases.
type ContainerdRelease struct {
	// BaseURL of the releases. Default: https://github.com/containerd/containerd/releases/download.
	// It must be https unless insecure is set.
	BaseURL string `json:"baseURL,omitempty"`
	// Insecure allows an http:// baseURL. The checksum comes from the same server as the
	// tarball, so anyone on the path can then replace both: use it only on a network you trust.
	// Default: false.
	Insecure bool `json:"insecure,omitempty"`
}

// ContainerdRegistry configures one registry.
type ContainerdRegistry struct {
	// Mirrors are registry URLs tried in order before the registry itself, e.g.
	// https://mirror.example.com or http://10.0.0.5:5000.
	Mirrors []string `json:"mirrors,omitempty"`
	// TLSConfig for the mirrors.
	TLSConfig *RegistryTLSConfig `json:"tlsConfig,omitempty"`
	// Auth are credentials for the registry and its mirrors.
	Auth *RegistryAuth `json:"auth,omitempty"`
	// InsecureCredentials allows Auth together with an http:// mirror (of this registry, or of
	// another one on a host that this one's credentials are for): containerd on the hosts and
	// slipway mirror-images then send the credentials to that mirror over plain http, where
	// anyone on the path can read them. Without it such a manifest is refused, and
	// mirror-images reads an http:// mirror without any credentials, the Docker config's
	// included. Default: false.
	InsecureCredentials bool `json:"insecureCredentials,omitempty"`
}

// RegistryTLSConfig sets TLS options for a registry.
type RegistryTLSConfig struct {
	// InsecureSkipVerify disables certificate verification.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// CAFile is a local PEM file of CA certificates to trust; slipway copies it to every host.
	CAFile string `json:"caFile,omitempty"`
}

// RegistryAuth are registry credentials. They are written to hosts with mode 0600 and never
// logged.
type RegistryAuth struct {
	// Username for basic authentication.
	Username string `json:"username,omitempty"`
	// Password for basic authentication.
	Password string `json:"password,omitempty"`
	// Auth is base64(username:password), as in a Docker config file.
	Auth string `json:"auth,omitempty"`
	// IdentityToken is an OAuth refresh token.
	IdentityToken string `json:"identityToken,omitempty"`
}

// RegistryConfiguration rewrites system image registries.
type RegistryConfiguration struct {
	// OverwriteRegistry replaces the registry of every system image, e.g. registry.example.com
	// turns registry.k8s.io/kube-apiserver into registry.example.com/kube-apiserver, and the
	// default machine-controller image ghcr.io/slipway-dev/machine-controller:<version> into
	// registry.example.com/slipway-dev/machine-controller:<version>.
	OverwriteRegistry string `json:"overwriteRegistry,omitempty"`
	// InsecureRegistry allows plain HTTP and unverified TLS to OverwriteRegistry.
	InsecureRegistry bool `json:"insecureRegistry,omitempty"`
}

// Assets says where Kubernetes binaries come from; set exactly one field.
type Assets struct {
	// Packages installs kubeadm, kubelet and kubectl from the Kubernetes package repositories (apt
	// on Debian and Ubuntu, dnf on RHEL and Rocky Linux; Flatcar gets binaries in /opt/bin).
	Packages *PackageAssets `json:"packages,omitempty"`
	// URL downloads the binaries from a web server laid out like https://dl.k8s.io/release, i.e.
	// <baseURL>/<version>/bin/linux/<arch>/<binary>, verifying each against its .sha256 file.
	URL *URLAssets `json:"url,omitempty"`
	// Upload copies the binaries from the operator's machine to every host, for sites without
	// internet access. Not with workers: pool machines boot on their own and download.
	Upload *UploadAssets `json:"upload,omitempty"`
}

// PackageAssets configures package repositories.
type PackageAssets struct {
	// BaseURL of the repositories, laid out like https://pkgs.k8s.io: slipway uses
	// <baseURL>/core:/stable:/v<minor>/deb/ (and /rpm/). Default: https://pkgs.k8s.io. It must
	// be https unless insecure is set.
	BaseURL string `json:"baseURL,omitempty"`
	// Insecure allows an http:// baseURL. The repository's signing key comes from the same
	// server, so anyone on the path can then replace the packages: use it only on a network
	// you trust (a lab, an air-gapped mirror). Default: false.
	Insecure bool `json:"insecure,omitempty"`
}

// URLAssets configures binary downloads.
type URLAssets struct {
	// BaseURL of the downloads, e.g. https://dl.k8s.io/release. It must be https unless
	// insecure is set.
	BaseURL string `json:"baseURL"`
	// Insecure allows an http:// baseURL. The checksums come from the same server as the
	// binaries, so anyone on the path can then replace both: use it only on a network you trust
	// (a lab, an air-gapped mirror). Default: false.
	Insecure bool `json:"insecure,omitempty"`
}

// UploadAssets configures binaries uploaded from the operator's machine.
type UploadAssets struct {
	// Directory on the operator's machine holding kubeadm, kubelet and kubectl for the cluster's
	// version and the hosts' architecture (each optionally with its .sha256 file), and, for hosts
	// whose containerd is too old for that version, containerd's release tarball as containerd
	// publishes it (containerd-2.2.9-linux-amd64.tar.gz, optionally with its .sha256sum). apply
	// checks that every file a host needs is there before it changes anything. Relative paths are
	// relative to the manifest.
	Directory string `json:"directory"`
}
