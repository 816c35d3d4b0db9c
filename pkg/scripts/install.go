package scripts

import (
	"fmt"
	"path"
	"strings"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// UploadDir is where the caller uploads kubeadm, kubelet and kubectl (and optionally their
// .sha256 files) for the upload asset source, before running InstallKubernetes.
func UploadDir(version string) string { return path.Join("/var/lib/slipway/assets", version) }

// flatcarReleaseURL is where Flatcar hosts download binaries when the manifest names package
// repositories: Flatcar has no package manager.
const flatcarReleaseURL = "https://dl.k8s.io/release"

// InstallParams configure InstallKubernetes.
type InstallParams struct {
	// Cluster is the loaded manifest: its version (the target version during upgrades) and its
	// asset source.
	Cluster *v1beta1.Cluster
	// Arch is the host's architecture as Kubernetes names it (Facts.GoArch); binary installs
	// need it.
	Arch string
	// CredentialsDir, when set, keeps the proxy (its URLs may carry credentials) out of the
	// script: it reads NodeCredentials' CredentialsProxy file in this directory on the host.
	CredentialsDir string
}

type installData struct {
	Family                            Family
	Proxy                             proxyEnv
	Version, PlainVersion             string
	Source                            string // packages, url or upload
	Repo, RepoFile                    string
	ReleaseURL, UploadDir, BinDir     string
	KubeletUnit, KubeadmDropIn        string
	DebKeyring, DebList, DebListEntry string
	// CurlProto limits curl's protocols, redirects included: https only, unless the manifest
	// allows plain http for its asset source.
	CurlProto string
}

// InstallKubernetes returns the script that installs kubeadm, kubelet and kubectl at exactly
// the cluster's version and holds them there: from the Kubernetes package repositories (apt
// on debian, dnf on rhel; held with apt-mark hold or the repository's exclude list), or as
// binaries from a URL base or the upload directory (always on Flatcar, into /opt/bin) with a
// kubelet unit and kubeadm's drop-in. It does nothing when the exact versions are installed,
// serves upgrades too (unhold, install, hold) and enables the kubelet without starting it.
func InstallKubernetes(os OS, p InstallParams) (string, error) {
	family, err := FamilyOf(os)
	if err != nil {
		return "", err
	}
	c := p.Cluster
	if c == nil {
		return "", fmt.Errorf("install kubernetes: no cluster")
	}
	v, err := v1beta1.ParseKubernetesVersion(c.Versions.Kubernetes)
	if err != nil {
		return "", fmt.Errorf("versions.kubernetes %q: %w", c.Versions.Kubernetes, err)
	}
	proxy, err := proxyFor(c)
	if err != nil {
		return "", err
	}
	if p.CredentialsDir != "" {
		if proxy, err = proxy.from(p.CredentialsDir); err != nil {
			return "", err
		}
	}
	d := installData{
		Family:       family,
		Proxy:        proxy,
		Version:      "v" + v.String(),
		PlainVersion: v.String(),
		BinDir:       family.binDir(),
		DebKeyring:   "/etc/apt/keyrings/kubernetes-apt-keyring.gpg",
		DebList:      "/etc/apt/sources.list.d/kubernetes.list",
		CurlProto:    "=https",
	}
	minor := fmt.Sprintf("v%d.%d", v.Major(), v.Minor())
	a := c.Assets
	if (a.Packages != nil && a.Packages.Insecure && family != Flatcar) || (a.URL != nil && a.URL.Insecure) {
		d.CurlProto = "=http,https"
	}
	switch {
	case a.Packages != nil && family != Flatcar:
		d.Source = "packages"
		if family == Debian {
			d.Repo = a.Packages.BaseURL + "/core:/stable:/" + minor + "/deb/"
			d.DebListEntry = "deb [signed-by=" + d.DebKeyring + "] " + d.Repo + " /\n"
		} else {
			d.Repo = a.Packages.BaseURL + "/core:/stable:/" + minor + "/rpm/"
			d.RepoFile = rpmRepoFile(minor, d.Repo)
		}
	case a.Packages != nil || a.URL != nil:
		d.Source = "url"
		base := flatcarReleaseURL
		if a.URL != nil {
			base = a.URL.BaseURL
		}
		d.ReleaseURL = base + "/" + d.Version + "/bin/linux/" + p.Arch
	case a.Upload != nil:
		d.Source = "upload"
		d.UploadDir = UploadDir(d.Version)
	default:
		return "", fmt.Errorf("install kubernetes: the manifest names no asset source")
	}
	if d.Source != "packages" {
		if p.Arch != "amd64" && p.Arch != "arm64" {
			return "", fmt.Errorf("install kubernetes: architecture %q is not amd64 or arm64", p.Arch)
		}
		d.KubeletUnit, d.KubeadmDropIn = kubeletUnit(d.BinDir), kubeadmDropIn(d.BinDir)
	}
	for _, s := range []string{d.Repo, d.ReleaseURL} {
		if err := checkValue(s); err != nil {
			return "", err
		}
		// Validation refuses this already; curl's --proto would too, less clearly.
		if strings.HasPrefix(s, "http://") && d.CurlProto == "=https" {
			return "", fmt.Errorf("install kubernetes: %s is plain http and assets.%s.insecure is not set", v1beta1.RedactURL(s), d.Source)
		}
	}
	return render("install-kubernetes", "kubeadm, kubelet and kubectl "+d.Version+" from "+d.Source, family, d)
}

// rpmRepoFile is the dnf repository of one minor. Its exclude line holds the packages: only
// installs with --disableexcludes=kubernetes (slipway's) change them.
func rpmRepoFile(minor, repo string) string {
	return fmt.Sprintf(`# Written by slipway from assets.packages in the cluster manifest.
[kubernetes]
name=Kubernetes %s
baseurl=%s
enabled=1
gpgcheck=1
gpgkey=%srepodata/repomd.xml.key
exclude=kubelet kubeadm kubectl cri-tools kubernetes-cni
`, minor, repo, repo)
}

// kubeletUnit starts the kubelet without flags: until kubeadm writes its configuration it
// exits and systemd restarts it, which is how the upstream packages behave too.
func kubeletUnit(binDir string) string {
	return `# Written by slipway for binary installs of the kubelet.
[Unit]
Description=kubelet: the Kubernetes node agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target containerd.service

[Service]
ExecStart=` + binDir + `/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`
}

// kubeadmDropIn hands the kubelet the files kubeadm writes: its kubeconfigs, its
// configuration, the flags kubeadm computes and the administrator's extra arguments.
func kubeadmDropIn(binDir string) string {
	return `# Written by slipway: the kubelet's configuration comes from kubeadm init and join.
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=` + binDir + `/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`
}
