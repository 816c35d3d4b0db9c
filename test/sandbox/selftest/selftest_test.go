package selftest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
	"github.com/slipway-dev/slipway/pkg/images"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
	"github.com/slipway-dev/slipway/test/sandbox/selftest"
)

// skipUnlessAble skips when Docker cannot be used here, except in CI, where nothing may skip.
func skipUnlessAble(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, and %s", why)
	}
	t.Skip(why)
}

// TestUpSelftestDown brings up a small sandbox of its own (own name and subnet, so that it does
// not disturb a developer's sandbox), checks what slipway relies on, runs the raw kubeadm
// self-test, and checks that down leaves no labelled Docker object behind. A cold cache builds
// Kubernetes first: run with -timeout 60m.
func TestUpSelftestDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Docker hosts and may build Kubernetes: skipped under -short")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		skipUnlessAble(t, "no usable Docker daemon: "+strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	const name = "gotest"
	sb, err := sandboxapi.Up(ctx, sandboxapi.Options{
		Name: name, Dir: t.TempDir(), Subnet: "172.30.251.0/24", Hosts: 2, LB: true,
		Versions: []string{"v1.36.3"}, Log: testWriter{t},
	})
	down := func() {
		if err := sandboxapi.Down(context.WithoutCancel(ctx), name); err != nil {
			t.Errorf("down: %v", err)
		}
	}
	if err != nil {
		down()
		t.Fatal(err)
	}
	defer func() {
		if sb != nil {
			down()
		}
	}()

	t.Run("strict ssh with known_hosts", func(t *testing.T) {
		for _, h := range sb.Hosts {
			if h.Role == sandboxapi.LoadBalancer {
				continue
			}
			out, err := exec.CommandContext(ctx, "ssh", "-i", sb.Path(sandboxapi.KeyFile),
				"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+sb.Path(sandboxapi.KnownHostsFile),
				"-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "root@"+h.IP, "hostname").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != h.Name {
				t.Errorf("ssh %s: %v: %s", h.Name, err, out)
			}
		}
	})

	t.Run("registry mirror serves images to containerd", func(t *testing.T) {
		h := sb.HostsWith(sandboxapi.Worker)[0]
		script := `set -e
mkdir -p /tmp/hosts/registry.k8s.io
printf 'server = "https://registry.k8s.io"\n[host."%s"]\n  capabilities = ["pull", "resolve"]\n' "$1" >/tmp/hosts/registry.k8s.io/hosts.toml
ctr -n k8s.io images pull --hosts-dir /tmp/hosts registry.k8s.io/kube-apiserver:"$2" >/dev/null
ctr -n k8s.io images ls -q | grep -x registry.k8s.io/kube-apiserver:"$2"
ctr -n k8s.io images rm registry.k8s.io/kube-apiserver:"$2" >/dev/null`
		if out, err := sb.RunScript(ctx, h, script, sb.Assets.Registry, sb.Kubernetes); err != nil {
			t.Errorf("pulling through the mirror on %s: %v: %s", h.Name, err, out)
		}
	})

	t.Run("slipway's images through the ghcr.io and registry.k8s.io mirrors", func(t *testing.T) {
		// What slipway of this checkout deploys by default (make build, and go build's "latest"),
		// and the cloud-controller-manager, pulled as the kubelet would and run from containerd.
		version, _ := images.GitVersion(ctx, filepath.Join("..", "..", ".."))
		mc := images.MachineController("", version, "").Refs[0]
		h := sb.HostsWith(sandboxapi.Worker)[0]
		script := `set -e
for r in ghcr.io registry.k8s.io; do
  mkdir -p /tmp/hosts/$r
  printf 'server = "https://%s"\n[host."%s"]\n  capabilities = ["pull", "resolve"]\n' "$r" "$1" >/tmp/hosts/$r/hosts.toml
done
shift
for ref in "$@"; do ctr -n k8s.io images pull --hosts-dir /tmp/hosts "$ref" >/dev/null; done
# The shim writes the output to a file: ctr run's own copy of a process that exits at once can
# lose it (seen with containerd 1.6).
ctr -n k8s.io run --rm --log-uri file:///tmp/mc.log "$1" mc-version /machine-controller --version
ctr -n k8s.io run --rm --log-uri file:///tmp/ccm.log "$3" ccm-version /bin/openstack-cloud-controller-manager --version
cat /tmp/mc.log /tmp/ccm.log
ctr -n k8s.io images rm "$@" >/dev/null`
		out, err := sb.RunScript(ctx, h, script, sb.Assets.Registry, mc, v1beta1.DefaultMachineControllerImage(""), addons.OpenStackCCMImage)
		if err != nil {
			t.Fatalf("pulling slipway's images through the mirrors on %s: %v: %s", h.Name, err, out)
		}
		if want := "machine-controller " + version + "\nKubernetes " + images.CCMVersion(); strings.TrimSpace(out) != want {
			t.Errorf("the images say %q, want %q", out, want)
		}
	})

	t.Run("recreate a host bare at the same address", func(t *testing.T) {
		before := sb.HostsWith(sandboxapi.Worker)[0]
		if _, err := sb.Run(ctx, before, "touch /var/lib/containerd/marker /etc/marker"); err != nil {
			t.Fatal(err)
		}
		if err := sb.Recreate(ctx, before.Name, true); err != nil {
			t.Fatal(err)
		}
		after, _ := sb.Host(before.Name)
		if after.IP != before.IP || after.HostKey == before.HostKey {
			t.Errorf("recreated host: address %s -> %s, host key changed %v; want same address, new key",
				before.IP, after.IP, after.HostKey != before.HostKey)
		}
		// Run dials with the recorded (new) host key, so this also proves the state was updated.
		out, err := sb.Run(ctx, after, "ls /var/lib/containerd/marker /etc/marker 2>&1 || true")
		if err != nil || !strings.Contains(out, "No such file") || strings.Count(out, "No such file") != 2 {
			t.Errorf("recreated host is not bare: %v: %s", err, out)
		}
	})

	t.Run("stop and start keep the disk", func(t *testing.T) {
		h := sb.HostsWith(sandboxapi.ControlPlane)[0]
		if _, err := sb.Run(ctx, h, "touch /etc/marker"); err != nil {
			t.Fatal(err)
		}
		if err := sb.Stop(ctx, h.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Run(ctx, h, "true"); err == nil {
			t.Error("a stopped host still answers SSH")
		}
		if err := sb.Start(ctx, h.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Run(ctx, h, "test -f /etc/marker"); err != nil {
			t.Errorf("the restarted host lost its disk: %v", err)
		}
	})

	t.Run("selftest", func(t *testing.T) {
		res, err := selftest.Run(ctx, sb, testWriter{t}, selftest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(res.Nodes, " Ready "); n != 2 {
			t.Errorf("want 2 Ready nodes, got %d:\n%s", n, res.Nodes)
		}
		if _, ok := sb.Host("selftest-cp"); ok {
			t.Error("selftest left its control-plane host in the sandbox state")
		}
	})

	if err := sb.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	sb = nil
	left, err := sandboxapi.Leftovers(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("down left labelled Docker objects behind: %v", left)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
