package scripts_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

// host is one sandbox host with the cluster loaded from the sandbox's own manifest and
// Terraform output, as slipway would load it.
type host struct {
	t       *testing.T
	ctx     context.Context
	sb      *sandboxapi.Sandbox
	h       sandboxapi.Host
	cluster *v1beta1.Cluster
	os      scripts.OS
}

// sandboxHost brings up a one-host sandbox of this package's own (name and subnet apart from a
// developer's sandbox and other packages' tests) and removes it when the test ends. It skips
// under -short and without Docker, and fails instead when CI=true.
func sandboxHost(t *testing.T, name, subnet string) *host {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Docker sandbox host and may build Kubernetes: skipped under -short")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and there is no usable Docker daemon: %s", out)
		}
		t.Skipf("no usable Docker daemon: %s", strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	t.Cleanup(cancel)
	sb, err := sandboxapi.Up(ctx, sandboxapi.Options{Name: name, Dir: t.TempDir(), Subnet: subnet, Hosts: 1,
		Versions: []string{"v1.36.3"}})
	t.Cleanup(func() {
		if err := sandboxapi.Down(context.Background(), name); err != nil {
			t.Errorf("sandbox down: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := config.Load(ctx, config.Options{ManifestPath: sb.Path(sandboxapi.ManifestFile), TerraformSource: sb.Path(sandboxapi.TFOutputFile)})
	if err != nil {
		t.Fatalf("loading the sandbox manifest: %v", err)
	}
	return &host{t: t, ctx: ctx, sb: sb, h: sb.HostsWith(sandboxapi.ControlPlane)[0], cluster: res.Cluster,
		os: scripts.OS{ID: "debian", VersionID: "12"}}
}

// run runs a script over SSH and returns the changes it reported, checking that it printed
// nothing else.
func (x *host) run(what, script string) []string {
	x.t.Helper()
	start := time.Now()
	out, err := x.sb.RunScript(x.ctx, x.h, script)
	if err != nil {
		x.t.Fatalf("%s: %v\nstdout:\n%s", what, err, out)
	}
	var changes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "slipway: ") {
			x.t.Errorf("%s printed a line that is not a change report: %q", what, line)
		}
		changes = append(changes, strings.TrimPrefix(line, "slipway: "))
	}
	x.t.Logf("%s (%.1fs): %q", what, time.Since(start).Seconds(), changes)
	return changes
}

// shell runs a plain command line on the host and returns its trimmed stdout.
func (x *host) shell(command string) string {
	x.t.Helper()
	out, err := x.sb.Run(x.ctx, x.h, command)
	if err != nil {
		x.t.Fatalf("%v", err)
	}
	return strings.TrimSpace(out)
}

func (x *host) probe() scripts.Facts {
	x.t.Helper()
	out, err := x.sb.RunScript(x.ctx, x.h, scripts.Probe())
	if err != nil {
		x.t.Fatalf("probe: %v", err)
	}
	f, err := scripts.ParseProbe(out)
	if err != nil {
		x.t.Fatalf("ParseProbe: %v\n%s", err, out)
	}
	return f
}

func contains(changes []string, prefix string) bool {
	for _, c := range changes {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

// wantNoChanges fails when a second run of a script changed anything.
func (x *host) wantNoChanges(what, script string) {
	x.t.Helper()
	if changes := x.run(what+" again", script); len(changes) > 0 {
		x.t.Errorf("%s is not idempotent: the second run changed %q", what, changes)
	}
}

// upstreamDNS is the sandbox's non-loopback DNS server, which the sandbox writes on every host.
func (x *host) upstreamDNS() []string {
	x.t.Helper()
	line := x.shell("awk '$1 == \"nameserver\" {print $2; exit}' " + x.sb.Assets.ResolvConf)
	if line == "" {
		x.t.Fatalf("no nameserver in %s on %s", x.sb.Assets.ResolvConf, x.h.Name)
	}
	return []string{line}
}

// TestScriptsOnSandboxHost runs every script on a real Debian 12 host (systemd, containerd
// 1.6.20 from Debian, cgroup v1 here) reached over SSH, and initialises a control plane on it
// with the rendered kubeadm configuration: prerequisites, install from the apt repository,
// kubeadm init, reset, then binary installs from a URL and from uploaded files. Every script
// is run twice; the second run must change nothing.
func TestScriptsOnSandboxHost(t *testing.T) {
	x := sandboxHost(t, "scripts", "172.30.241.0/24")
	c := x.cluster

	before := x.probe()
	if before.OS.ID != "debian" || !strings.HasPrefix(before.ContainerdVersion, "1.6.") || before.KubeadmVersion != "" {
		t.Fatalf("unexpected bare host: %+v", before)
	}
	if !before.ResolvLoopback {
		t.Errorf("resolv_loopback = false on a Docker host whose resolver is 127.0.0.11")
	}

	pause, err := kubeadm.PauseImage(c)
	if err != nil {
		t.Fatal(err)
	}
	prereq, err := scripts.Prerequisites(x.os, scripts.PrereqParams{Cluster: c, SandboxImage: pause, UpstreamDNS: x.upstreamDNS()})
	if err != nil {
		t.Fatal(err)
	}
	// A package unpacked but not configured, as an apt run killed between the two leaves it:
	// apt refuses to install anything until dpkg --configure -a has finished it.
	x.shell(`set -e
d=$(mktemp -d)
mkdir -p "$d/pkg/DEBIAN"
printf 'Package: slipway-test-interrupted\nVersion: 1.0\nArchitecture: all\nMaintainer: slipway tests <tests@slipway.invalid>\nDescription: left unconfigured by a test\n' >"$d/pkg/DEBIAN/control"
dpkg-deb --build "$d/pkg" "$d/p.deb" >/dev/null
dpkg --unpack "$d/p.deb" >/dev/null 2>&1
rm -rf "$d"
dpkg --audit | grep -q slipway-test-interrupted`)
	changes := x.run("prerequisites", prereq)
	if !contains(changes, "finished an interrupted package installation") || x.shell("dpkg --audit") != "" {
		t.Errorf("prerequisites did not finish the interrupted dpkg run: %q", changes)
	}
	x.shell("dpkg --purge slipway-test-interrupted >/dev/null")
	// The bare host's containerd 1.6 is too old for v1.36: the release replaces it.
	for _, want := range []string{"installed containerd 2.2.9 from its release (had 1.6.", "wrote /etc/containerd/config.toml", "wrote /etc/containerd/certs.d/registry.k8s.io/hosts.toml", "wrote /etc/slipway/resolv.conf"} {
		if !contains(changes, want) {
			t.Errorf("prerequisites did not report %q", want)
		}
	}
	pid := x.shell("systemctl show -p MainPID --value containerd")
	x.wantNoChanges("prerequisites", prereq)
	if again := x.shell("systemctl show -p MainPID --value containerd"); again != pid {
		t.Errorf("containerd restarted on a converged host (pid %s, then %s)", pid, again)
	}
	if got := x.shell("containerd config dump | grep -c 'SystemdCgroup = true'"); got == "0" {
		t.Error("containerd does not run with SystemdCgroup = true")
	}
	if got := x.shell("containerd --version | awk '{sub(/^v/, \"\", $3); print $3}'; head -n 2 /etc/containerd/config.toml | tail -n 1"); got != "2.2.9\nversion = 3" {
		t.Errorf("containerd version and config version = %q, want v2.2.9 and version = 3", got)
	}
	if got := x.probe(); strings.TrimPrefix(got.ContainerdVersion, "v") != "2.2.9" || !got.ContainerdActive {
		t.Errorf("probe after prerequisites: containerd %q, active %t", got.ContainerdVersion, got.ContainerdActive)
	}

	install, err := scripts.InstallKubernetes(x.os, scripts.InstallParams{Cluster: c, Arch: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	changes = x.run("install from packages", install)
	if !contains(changes, "installed kubeadm, kubelet and kubectl 1.36.3-") || !contains(changes, "held kubelet") {
		t.Errorf("install from packages reported %q", changes)
	}
	x.wantNoChanges("install from packages", install)
	if held := x.shell("apt-mark showhold | sort | tr '\\n' ' '"); held != "kubeadm kubectl kubelet" {
		t.Errorf("held packages = %q", held)
	}

	// The mirror in hosts.toml serves registry.k8s.io through the CRI, as the kubelet pulls.
	x.shell("crictl --runtime-endpoint unix:///run/containerd/containerd.sock pull " + pause + " >/dev/null")

	initControlPlane(t, x, pause)

	// A CNI's configuration, as flannel's DaemonSet writes it.
	x.shell("printf '{}' >/etc/cni/net.d/10-flannel.conflist")
	reset, err := scripts.Reset(x.os, scripts.ResetParams{Cluster: c})
	if err != nil {
		t.Fatal(err)
	}
	changes = x.run("reset", reset)
	if !contains(changes, "ran kubeadm reset") || !contains(changes, "removed /etc/kubernetes") || !contains(changes, "removed Kubernetes and CNI rules") {
		t.Errorf("reset reported %q", changes)
	}
	x.wantNoChanges("reset", reset)
	after := x.probe()
	if after.AdminConf || after.KubeletConf || after.EtcdData || after.KubeletActive || !after.ContainerdActive || after.KubeadmVersion != "v1.36.3" {
		t.Errorf("after reset: %+v", after)
	}
	// The directory stays (containerd watches it), empty.
	if left := x.shell("test -d /etc/cni/net.d && ls -A /etc/cni/net.d | wc -l"); left != "0" {
		t.Errorf("after reset /etc/cni/net.d is missing or holds %s entries", left)
	}
	if rules := x.shell("iptables-save | grep -c KUBE- || true"); rules != "0" {
		t.Errorf("%s KUBE- iptables lines left after reset", rules)
	}
	resetRespectsMounts(t, x, reset)

	binaryInstalls(t, x)
}

// resetRespectsMounts: reset never deletes through a mount point. A volume left mounted below
// /var/lib/kubelet is unmounted before the directory goes; one that cannot be unmounted (in use)
// stops reset, named, with its data intact; /var/lib/etcd on a file system of its own is
// emptied and stays mounted. (With etcd member data on the host, kubeadm reset runs first,
// unmounts the kubelet's volumes itself and refuses a busy one in the same way.)
func resetRespectsMounts(t *testing.T, x *host, reset string) {
	x.shell(`set -e
for v in /var/lib/kubelet/pods/a/volumes/nfs /var/lib/kubelet/pods/b/volumes/busy /var/lib/etcd; do
  mkdir -p "$v" && mount -t tmpfs tmpfs "$v" && echo precious >"$v/data"
done
# Something works in the busy volume, so it cannot be unmounted.
(cd /var/lib/kubelet/pods/b/volumes/busy && exec setsid sleep 600) </dev/null >/dev/null 2>&1 &
for _ in $(seq 50); do pgrep -x sleep >/dev/null && break; sleep 0.1; done`)
	out, err := x.sb.RunScript(x.ctx, x.h, reset)
	if err == nil || !strings.Contains(err.Error(), "not removing /var/lib/kubelet: still mounted below it, and unmounting failed: /var/lib/kubelet/pods/b/volumes/busy -") {
		t.Errorf("reset with a busy volume below /var/lib/kubelet: %v\n%s", err, out)
	}
	if got := x.shell("cat /var/lib/kubelet/pods/b/volumes/busy/data"); got != "precious" {
		t.Errorf("the busy volume's data is gone: %q", got)
	}
	x.shell("pkill -x sleep; for _ in $(seq 50); do pgrep -x sleep >/dev/null || break; sleep 0.1; done")
	changes := x.run("reset after the volume was freed", reset)
	// The stopped reset did what came before /var/lib/kubelet, and unmounted what it could.
	both := out + "slipway: " + strings.Join(changes, "\nslipway: ")
	for _, want := range []string{"emptied /var/lib/etcd (a mount point of its own, kept)", "unmounted /var/lib/kubelet/pods/a/volumes/nfs",
		"unmounted /var/lib/kubelet/pods/b/volumes/busy"} {
		if !strings.Contains(both, "slipway: "+want) {
			t.Errorf("reset did not report %q:\n%s", want, both)
		}
	}
	// Where the container's root is fuse-overlayfs, the sandbox keeps /var/lib/kubelet on a volume
	// (test/sandbox/node/entrypoint.sh): then it is a mount point of its own, emptied and kept.
	if !strings.Contains(both, "slipway: removed /var/lib/kubelet\n") && !strings.Contains(both, "slipway: emptied /var/lib/kubelet (a mount point of its own, kept)") {
		t.Errorf("reset neither removed nor emptied /var/lib/kubelet:\n%s", both)
	}
	if left := x.shell("mountpoint -q /var/lib/etcd && ls -A /var/lib/etcd | wc -l"); left != "0" {
		t.Errorf("/var/lib/etcd is not mounted and empty after reset: %q entries", left)
	}
	x.wantNoChanges("reset", reset)
	x.shell("umount /var/lib/etcd && rmdir /var/lib/etcd")
}

// initControlPlane runs kubeadm init with the rendered configuration and checks what the
// kubelet and the API server make of it.
func initControlPlane(t *testing.T, x *host, pause string) {
	c := x.cluster
	f := x.probe()
	ignore, err := kubeadm.PreflightIgnores(c, f.CgroupVersion == 1, "HTTPProxyCIDR")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kubeadm.InitConfig(c, kubeadm.NodeParams{Host: c.ControlPlane.Hosts[0], Name: f.Hostname, IgnorePreflightErrors: ignore},
		kubeadm.KubeletParams{ResolvConf: scripts.KubeletResolvConf, CgroupV1: f.CgroupVersion == 1},
		kubeadm.InitSecrets{Token: "abcdef.0123456789abcdef", TokenTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	script := "set -euo pipefail\ncat >/root/kubeadm.yaml <<'EOF'\n" + string(cfg) + "EOF\n" +
		"kubeadm init --config /root/kubeadm.yaml >/root/kubeadm-init.log 2>&1 || { tail -40 /root/kubeadm-init.log >&2; exit 1; }\n"
	if out, err := x.sb.RunScript(x.ctx, x.h, script); err != nil {
		t.Fatalf("kubeadm init with the rendered configuration: %v\n%s", err, out)
	}
	t.Logf("kubeadm init: %.1fs", time.Since(start).Seconds())
	k := "kubectl --kubeconfig /etc/kubernetes/admin.conf "
	if got := x.shell(k + "get node " + f.Hostname + " -o jsonpath='{.spec.taints[0].key}'"); got != "node-role.kubernetes.io/control-plane" {
		t.Errorf("control-plane taint = %q", got)
	}
	if got := x.shell("grep -E '^(resolvConf|cgroupDriver|serverTLSBootstrap):' /var/lib/kubelet/config.yaml | sort | tr '\\n' ' '"); got !=
		"cgroupDriver: systemd resolvConf: /etc/slipway/resolv.conf serverTLSBootstrap: true" {
		t.Errorf("kubelet config.yaml has %q", got)
	}
	if got := x.shell(k + "-n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | grep -c " + c.ControlPlane.Hosts[0].PrivateAddress); got == "0" {
		t.Error("the ClusterConfiguration in the cluster lacks the host address in certSANs")
	}
}

// binaryInstalls replaces the packages with binaries from the sandbox's release tree and then
// from uploaded files, and removes them again.
func binaryInstalls(t *testing.T, x *host) {
	c := *x.cluster
	remove, err := scripts.Reset(x.os, scripts.ResetParams{Cluster: &c, RemoveBinaries: true})
	if err != nil {
		t.Fatal(err)
	}
	if changes := x.run("reset removing packages", remove); !contains(changes, "removed kubeadm kubelet kubectl cri-tools") {
		t.Errorf("reset --remove-binaries reported %q", changes)
	}
	if f := x.probe(); f.KubeadmVersion != "" || f.KubeletVersion != "" {
		t.Fatalf("binaries left after removing the packages: %+v", f)
	}

	release := x.sb.Assets.Files + "/release"
	for _, tc := range []struct {
		name   string
		assets v1beta1.Assets
		setup  string
	}{
		{"url", v1beta1.Assets{URL: &v1beta1.URLAssets{BaseURL: release, Insecure: true}}, ""},
		{"upload", v1beta1.Assets{Upload: &v1beta1.UploadAssets{Directory: filepath.Join(t.TempDir(), "bin")}},
			// What slipway's upload does over SFTP; here the host fetches the same files itself.
			"set -e; d=" + scripts.UploadDir("v1.36.3") + "; mkdir -p $d; for b in kubeadm kubelet kubectl; do " +
				"curl -fsS -o $d/$b " + release + "/v1.36.3/bin/linux/amd64/$b; curl -fsS -o $d/$b.sha256 " + release + "/v1.36.3/bin/linux/amd64/$b.sha256; done"},
	} {
		c.Assets = tc.assets
		if tc.setup != "" {
			x.shell(tc.setup)
		}
		install, err := scripts.InstallKubernetes(x.os, scripts.InstallParams{Cluster: &c, Arch: "amd64"})
		if err != nil {
			t.Fatal(err)
		}
		changes := x.run("install from "+tc.name, install)
		if !contains(changes, "installed kubelet v1.36.3 in /usr/bin") || !contains(changes, "wrote /etc/systemd/system/kubelet.service") || !contains(changes, "enabled kubelet") {
			t.Errorf("install from %s reported %q", tc.name, changes)
		}
		x.wantNoChanges("install from "+tc.name, install)
		if f := x.probe(); f.KubeadmVersion != "v1.36.3" || f.KubeletVersion != "v1.36.3" || f.KubectlVersion != "v1.36.3" {
			t.Errorf("after install from %s: kubeadm %q, kubelet %q, kubectl %q", tc.name, f.KubeadmVersion, f.KubeletVersion, f.KubectlVersion)
		}
		remove, err := scripts.Reset(x.os, scripts.ResetParams{Cluster: &c, RemoveBinaries: true})
		if err != nil {
			t.Fatal(err)
		}
		if changes := x.run("reset removing "+tc.name+" binaries", remove); !contains(changes, "removed /usr/bin/kubelet") {
			t.Errorf("reset after %s install reported %q", tc.name, changes)
		}
		if f := x.probe(); f.KubeadmVersion != "" {
			t.Errorf("kubeadm %s left after reset", f.KubeadmVersion)
		}
	}
}
