package scripts

import (
	"fmt"
	"path"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// ResetParams configure Reset.
type ResetParams struct {
	// Cluster is the loaded manifest; its asset source says what RemoveBinaries uninstalls.
	Cluster *v1beta1.Cluster
	// RemoveBinaries also uninstalls what InstallKubernetes installed.
	RemoveBinaries bool
}

type resetData struct {
	Family         Family
	CRISocket      string
	Dirs           []string
	StateDir       string
	Keep           []string
	Interfaces     []string
	RemoveBinaries bool
	Packages       bool
	BinDir         string
	// SnapshotUnit is the timer of scheduled etcd snapshots that reset stops; SnapshotDir, where
	// they are, stays.
	SnapshotUnit, SnapshotDir string
}

// Reset returns the script that returns a host to the state before slipway joined it:
// `kubeadm reset -f`, the kubelet stopped, the directories of Kubernetes, etcd, the CNI and
// slipway removed (never through a mount point: what is mounted below them is unmounted, and
// what stays mounted stops the script; the apply lock stays, its holder releases it, and so do
// the scheduled etcd snapshots taken, whose timer stops),
// kube-proxy's and the CNIs' iptables rules, IPVS services and interfaces gone, and optionally
// kubeadm, kubelet and kubectl uninstalled. containerd keeps running, so that the next apply
// can start at once. On a clean host it does nothing.
func Reset(os OS, p ResetParams) (string, error) {
	family, err := FamilyOf(os)
	if err != nil {
		return "", err
	}
	if p.Cluster == nil {
		return "", fmt.Errorf("reset: no cluster")
	}
	d := resetData{
		Family:    family,
		CRISocket: "unix:///run/containerd/containerd.sock",
		Dirs: []string{"/etc/kubernetes", "/var/lib/etcd", "/var/lib/kubelet", "/var/lib/cni",
			"/run/flannel", "/etc/slipway", "/root/.kube"},
		StateDir:       path.Dir(ApplyLockPath),
		Keep:           []string{path.Base(ApplyLockPath), path.Base(ApplyLockPath) + ".guard", path.Base(SnapshotDir)},
		SnapshotUnit:   SnapshotUnit,
		SnapshotDir:    SnapshotDir,
		Interfaces:     []string{"cni0", "flannel.1", "flannel-v6.1", "vxlan.calico", "cilium_host", "cilium_net", "cilium_vxlan", "kube-ipvs0"},
		RemoveBinaries: p.RemoveBinaries,
		Packages:       p.Cluster.Assets.Packages != nil && family != Flatcar,
		BinDir:         family.binDir(),
	}
	return render("reset", "remove Kubernetes from the host, keep containerd", family, d)
}

// RestartKubelet returns a script that restarts the kubelet and waits until systemd reports
// it running. Restart kubelets one host at a time.
func RestartKubelet() string {
	s, err := render("restart-kubelet", "restart the kubelet", anyFamily, nil)
	if err != nil {
		// No parameters: a failure is a broken template, caught by the tests.
		panic(err)
	}
	return s
}
