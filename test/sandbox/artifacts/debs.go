package artifacts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// deb describes one package in the layout of the upstream Kubernetes packages: binaries in
// /usr/bin, the kubelet unit from the kubelet package and kubeadm's drop-in from kubeadm.
type deb struct {
	name, version, depends, description string
	files                               []tarFile // name relative to /, src on the host or data
	postinst                            string
}

// debVersion turns v1.36.3 into 1.36.3-1.1, the revision scheme of pkgs.k8s.io.
func debVersion(v string) string { return strings.TrimPrefix(v, "v") + "-1.1" }

func releaseDebs(r *Release, crictl string) []deb {
	v := debVersion(r.Version)
	bin := func(name string) tarFile {
		return tarFile{name: "usr/bin/" + name, mode: 0o755, src: filepath.Join(r.Bin, name)}
	}
	return []deb{
		{name: "kubelet", version: v, depends: "iptables (>= 1.4.21), iproute2, socat, util-linux, mount, ethtool, conntrack",
			description: "node agent that runs pods",
			files: []tarFile{bin("kubelet"),
				{name: "usr/lib/systemd/system/kubelet.service", mode: 0o644, data: []byte(kubeletUnit)},
				{name: "etc/kubernetes/manifests/", mode: 0o755}},
			postinst: "#!/bin/sh\nset -e\nif [ \"$1\" = configure ] && [ -d /run/systemd/system ]; then\n  systemctl daemon-reload\n  systemctl enable kubelet.service\nfi\n"},
		{name: "kubeadm", version: v, depends: "cri-tools (>= 1.30.0)", description: "cluster bootstrapping tool",
			files: []tarFile{bin("kubeadm"),
				{name: "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", mode: 0o644, data: []byte(kubeadmDropIn)}}},
		{name: "kubectl", version: v, description: "command-line client for the Kubernetes API", files: []tarFile{bin("kubectl")}},
		{name: "cri-tools", version: debVersion(r.CriTools), description: "crictl, a CLI for CRI runtimes",
			files: []tarFile{{name: "usr/bin/crictl", mode: 0o755, src: crictl}}},
	}
}

// The kubelet starts without flags and restarts forever until kubeadm writes its configuration;
// kubeadm's drop-in then points it at that configuration.
const kubeletUnit = `[Unit]
Description=kubelet: the Kubernetes node agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`

const kubeadmDropIn = `# Written by kubeadm's package: the kubelet's configuration comes from kubeadm init/join.
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# kubeadm writes KUBELET_KUBEADM_ARGS at runtime.
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# Users set KUBELET_EXTRA_ARGS here.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`

// control is the package's DEBIAN/control text, which is also its stanza in Packages.
func (d deb) control(size int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Package: %s\nVersion: %s\nArchitecture: amd64\n", d.name, d.version)
	fmt.Fprintf(&b, "Maintainer: Slipway sandbox <sandbox@slipway.invalid>\nInstalled-Size: %d\n", (size+1023)/1024)
	if d.depends != "" {
		fmt.Fprintf(&b, "Depends: %s\n", d.depends)
	}
	fmt.Fprintf(&b, "Section: admin\nPriority: optional\nHomepage: https://kubernetes.io\n")
	fmt.Fprintf(&b, "Description: Kubernetes %s (built from source for the Slipway sandbox)\n", d.description)
	return b.String()
}

// build writes the package into dir with dpkg-deb and returns its file name and control text. Data is stored
// uncompressed (-Znone): it only crosses the sandbox bridge, and xz would cost a minute of CPU.
func (d deb) build(ctx context.Context, dir string) (string, string, error) {
	stage, err := os.MkdirTemp(dir, ".stage-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(stage)
	var size int64
	for _, f := range d.files {
		dst := filepath.Join(stage, f.name)
		if strings.HasSuffix(f.name, "/") {
			if err := os.MkdirAll(dst, os.FileMode(f.mode)); err != nil {
				return "", "", err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", "", err
		}
		if f.data != nil {
			err = os.WriteFile(dst, f.data, os.FileMode(f.mode))
		} else {
			err = copyFile(f.src, dst)
		}
		if err != nil {
			return "", "", err
		}
		if err := os.Chmod(dst, os.FileMode(f.mode)); err != nil {
			return "", "", err
		}
		fi, err := os.Stat(dst)
		if err != nil {
			return "", "", err
		}
		size += fi.Size()
	}
	meta := filepath.Join(stage, "DEBIAN")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(meta, "control"), []byte(d.control(size)), 0o644); err != nil {
		return "", "", err
	}
	if d.postinst != "" {
		if err := os.WriteFile(filepath.Join(meta, "postinst"), []byte(d.postinst), 0o755); err != nil {
			return "", "", err
		}
	}
	name := fmt.Sprintf("%s_%s_amd64.deb", d.name, d.version)
	out, err := exec.CommandContext(ctx, "dpkg-deb", "--root-owner-group", "-Znone", "--build", stage, filepath.Join(dir, name)).CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("dpkg-deb --build %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return name, d.control(size), nil
}
