package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
	"github.com/slipway-dev/slipway/test/sandbox/selftest"
)

// TestAdopt is issue 21's adoption of a running cluster. A control plane and a worker are
// installed without slipway, the way KubeOne lays a cluster out: the Kubernetes packages from
// the apt repository, containerd from its release with registry mirrors in certs.d, kubeadm init
// and join from a kubeadm configuration file, and a CNI the user applied (KubeOne's `cni:
// external`). A KubeOne manifest of that cluster goes through `slipway config migrate`, and
// slipway apply with the result must adopt the cluster: a plan of adoption steps only (each
// saying why), no static pod, containerd or kubelet restarted, and nothing to do afterwards.
// Then slipway upgrades the adopted cluster to the next minor, as it would one it made, and
// enables encryption at rest on it.
func TestAdopt(t *testing.T) {
	t.Parallel()
	h := upSandbox(t, "adopt", "172.30.248.0/24", 2, 1, false) // beside TestQuickStart (172.30.253.0/24) in make test-e2e
	cp, worker := h.host("cp-1"), h.host("worker-1")
	hosts := []string{cp.Name, worker.Name}

	// The sandbox-only settings of the slipway manifest: where packages, containerd's release
	// and DNS come from, and the kubelet and kube-proxy settings hosts that are containers need.
	// KubeOne has no field for them; they are laid over the migrated manifest below.
	sandboxOnly := func(version string) map[string]any {
		var m map[string]any
		data, err := os.ReadFile(h.writeManifest("sandbox-"+version+".yaml", manifestParams{Name: "e2e", Version: version,
			ControlPlanes: h.hosts(cp.Name), Workers: h.hosts(worker.Name), Endpoint: cp.IP, CNI: "{external: {}}"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := sandboxOnly(previous)
	podSubnet := h.installLikeKubeOne(t, base, cp, worker)

	kubeone := h.writeRaw("kubeone.yaml", fmt.Sprintf(`apiVersion: kubeone.k8c.io/v1beta2
kind: KubeOneCluster
name: e2e
versions:
  kubernetes: %[1]s
controlPlane:
  hosts:
    - {publicAddress: %[2]s, privateAddress: %[2]s, hostname: %[3]s, sshUsername: root, sshPrivateKeyFile: %[6]s, sshHostPublicKey: "%[9]s", isLeader: true}
staticWorkers:
  hosts:
    - {publicAddress: %[4]s, privateAddress: %[4]s, hostname: %[5]s, sshUsername: root, sshPrivateKeyFile: %[6]s, sshHostPublicKey: "%[10]s"}
apiEndpoint:
  host: %[2]s
  port: 6443
clusterNetwork:
  podSubnet: %[7]s
  cni:
    external: {}
cloudProvider:
  none: {}
containerRuntime:
  containerd:
    registries:
      registry.k8s.io: {mirrors: ["%[8]s"]}
      ghcr.io: {mirrors: ["%[8]s"]}
machineController:
  deploy: false
`, previous, cp.IP, cp.Name, worker.IP, worker.Name, h.sb.Path(sandboxapi.KeyFile), podSubnet, h.sb.Assets.Registry,
		// KubeOne's host keys are bytes: base64 in its YAML.
		base64.StdEncoding.EncodeToString([]byte(cp.HostKey)), base64.StdEncoding.EncodeToString([]byte(worker.HostKey))))
	r := h.slipway(nil, "config", "migrate", "--from-kubeone", kubeone)
	if r.code != 0 {
		t.Fatalf("config migrate failed with exit code %d", r.code)
	}
	// manifest is the migrated manifest at version, with encryption at rest as given (nil: the
	// field left out).
	manifestWith := func(version string, encryption *bool) string {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(r.stdout), &m); err != nil {
			t.Fatalf("the migrated manifest is not YAML: %v", err)
		}
		m["versions"] = map[string]any{"kubernetes": version}
		name := "adopt-" + version + ".yaml"
		if encryption != nil {
			m["encryption"] = map[string]any{"enabled": *encryption}
			name = fmt.Sprintf("adopt-%s-encryption-%t.yaml", version, *encryption)
		}
		overlay(m, sandboxOnly(version), "assets", "kubelet", "clusterNetwork.upstreamDNS", "clusterNetwork.kubeProxy",
			"containerRuntime.containerd.release")
		data, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return h.writeRaw(name, string(data))
	}
	manifest := func(version string) string { return manifestWith(version, nil) }

	t.Run("apply adopts the cluster: records only, no static pod, containerd or kubelet restarted", func(t *testing.T) {
		h := h.with(t)
		m := manifest(previous)
		before := h.runningState(t, hosts)
		p := h.plan(m)
		want := []string{plan.StepAdoptHost + " on " + cp.Name, plan.StepAdoptHost + " on " + worker.Name}
		if got := stepList(p); !slices.Equal(got, want) {
			t.Fatalf("the plan for a cluster KubeOne made: %v; want only %v", got, want)
		}
		for _, s := range p.Steps {
			if !strings.Contains(s.Reason, "another tool") {
				t.Errorf("%s does not say why: %q", s, s.Reason)
			}
		}
		h.mustApply(m)
		if after := h.runningState(t, hosts); !before.kept(after) {
			t.Errorf("adoption restarted something:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if p := h.plan(m); len(p.Steps) != 0 {
			t.Errorf("the plan after adoption: %v; want nothing to do", stepList(p))
		}
		h.expectNodes(h.kube("e2e"), hosts, previous)
	})

	t.Run("the adopted cluster upgrades to the next minor", func(t *testing.T) {
		h := h.with(t)
		m := manifest(current)
		h.expectPlanStartsWith(m, plan.StepUpgradePreflight)
		h.mustApply(m)
		c := h.kube("e2e")
		h.expectNodes(c, hosts, current)
		if p := h.plan(m); len(p.Steps) != 0 {
			t.Errorf("the plan after the upgrade: %v; want nothing to do", stepList(p))
		}
		h.importNetcheck(hosts...)
		h.checkPodNetwork(c, len(hosts))
	})

	// Issue 20's test 6 on the adopted cluster, which has a control plane of its own: encryption
	// at rest enabled on a running cluster and its key rotated (checkEncryption), then turned off,
	// which apply refuses.
	on, off := true, false
	t.Run("encryption at rest enabled on the running cluster, then its key rotated", func(t *testing.T) {
		h.with(t).checkEncryption(t, h.kube("e2e"), manifestWith(current, &on), []string{cp.Name})
	})
	t.Run("turning encryption off again is refused, and nothing changes", func(t *testing.T) {
		h := h.with(t)
		r := h.slipway(nil, "apply", "-m", manifestWith(current, &off), "--auto-approve")
		if want := "encryption.enabled: Invalid value: false"; r.code == 0 || !strings.Contains(r.out, want) {
			t.Errorf("apply with encryption off: exit code %d; want a refusal naming %q", r.code, want)
		}
		h.expectNoPlan(t, manifestWith(current, &on), "the refused apply")
	})
}

// installLikeKubeOne installs a cluster on cp and worker without slipway, laid out as KubeOne
// lays one out, at the manifest m's version, with flannel applied as the user's own CNI. It
// returns the pod subnet.
func (h *harness) installLikeKubeOne(t *testing.T, m map[string]any, cp, worker sandboxapi.Host) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// flannel's manifests as slipway renders them for this network: the user's CNI.
	flannel := m
	flannel["clusterNetwork"].(map[string]any)["cni"] = map[string]any{"flannel": map[string]any{}}
	data, err := yaml.Marshal(flannel)
	if err != nil {
		t.Fatal(err)
	}
	res, err := config.Load(ctx, config.Options{ManifestPath: h.writeRaw("flannel.yaml", string(data))})
	if err != nil {
		t.Fatal(err)
	}
	cni, err := addons.Render(res.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	version, pods := res.Cluster.Versions.Kubernetes, res.Cluster.ClusterNetwork.PodSubnet
	start := time.Now()
	for _, host := range []sandboxapi.Host{cp, worker} {
		if _, err := h.sb.RunScript(ctx, host, selftest.InstallScript, selftest.InstallArgs(h.sb, version)...); err != nil {
			t.Fatalf("installing the packages on %s: %v", host.Name, err)
		}
		// KubeOne holds the packages, so that only it moves them; flannel's images come
		// through the mirror too.
		mirror := "apt-mark hold kubeadm kubelet kubectl >/dev/null && mkdir -p /etc/containerd/certs.d/ghcr.io && " +
			"printf '[host.\"%s\"]\\n  capabilities = [\"pull\", \"resolve\"]\\n' " +
			shellQuote(h.sb.Assets.Registry) + " >/etc/containerd/certs.d/ghcr.io/hosts.toml"
		if _, err := h.sb.Run(ctx, host, mirror); err != nil {
			t.Fatal(err)
		}
	}
	join, err := h.sb.RunScript(ctx, cp, selftest.InitScript, version, cp.IP, pods, h.sb.Assets.ResolvConf)
	if err != nil {
		t.Fatalf("kubeadm init on %s: %v", cp.Name, err)
	}
	if _, err := h.sb.Run(ctx, worker, strings.TrimSpace(join)+" "+selftest.JoinPreflight(h.sb)+
		" --cri-socket unix:///run/containerd/containerd.sock >/root/kubeadm-join.log 2>&1 || { tail -30 /root/kubeadm-join.log >&2; exit 1; }"); err != nil {
		t.Fatalf("kubeadm join on %s: %v", worker.Name, err)
	}
	if _, err := h.sb.RunScript(ctx, cp, "kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f - >/dev/null <<'SLIPWAY_E2E_EOF'\n"+
		string(cni)+"\nSLIPWAY_E2E_EOF\n"); err != nil {
		t.Fatalf("applying flannel: %v", err)
	}
	ready := "kubectl --kubeconfig /etc/kubernetes/admin.conf wait --for=condition=Ready nodes --all --timeout=5m && " +
		"kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-flannel rollout status daemonset --timeout=5m"
	if _, err := h.sb.RunScript(ctx, cp, ready); err != nil {
		t.Fatalf("the cluster KubeOne-style is not Ready: %v", err)
	}
	t.Logf("installed %s without slipway on %s and %s in %s", version, cp.Name, worker.Name, time.Since(start).Round(time.Second))
	return pods
}

// hostState is, per host, the IDs of its running containers and the main PIDs of containerd and
// the kubelet.
type hostState map[string]struct {
	containers map[string]bool
	pids       string
}

// runningState reads every host's hostState.
func (h *harness) runningState(t *testing.T, hosts []string) hostState {
	t.Helper()
	st := hostState{}
	for _, host := range hosts {
		out, err := h.onHost(host, "set -o pipefail; crictl --runtime-endpoint unix:///run/containerd/containerd.sock ps -q --state running 2>/dev/null | sort | tr '\\n' ' '; echo; "+
			"systemctl show -p MainPID --value containerd kubelet | tr '\\n' ' '")
		if err != nil {
			t.Fatal(err)
		}
		ids, pids, _ := strings.Cut(out, "\n")
		if strings.TrimSpace(ids) == "" {
			t.Fatalf("%s runs no container", host)
		}
		e := st[host]
		e.containers, e.pids = map[string]bool{}, strings.TrimSpace(pids)
		for _, id := range strings.Fields(ids) {
			e.containers[id] = true
		}
		st[host] = e
	}
	return st
}

// kept reports whether nothing of s was restarted in after: containerd and the kubelet kept their
// PIDs and every container of s still runs. A container that started meanwhile (a pod of the
// fresh cluster that was still being scheduled, such as CoreDNS once the CNI is up) is not a
// restart: comparing the whole lists made the test fail on it.
func (s hostState) kept(after hostState) bool {
	for host, e := range s {
		if after[host].pids != e.pids {
			return false
		}
		for id := range e.containers {
			if !after[host].containers[id] {
				return false
			}
		}
	}
	return true
}

func (s hostState) String() string {
	var b strings.Builder
	for _, host := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s: %s | containerd, kubelet %s\n", host, strings.Join(slices.Sorted(maps.Keys(s[host].containers)), " "), s[host].pids)
	}
	return b.String()
}

// overlay sets, for each dotted path, m's value to the one in from (removing it when from has
// none).
func overlay(m, from map[string]any, paths ...string) {
	for _, p := range paths {
		keys := strings.Split(p, ".")
		dst, src := m, from
		for _, k := range keys[:len(keys)-1] {
			next, _ := dst[k].(map[string]any)
			if next == nil {
				next = map[string]any{}
				dst[k] = next
			}
			dst = next
			src, _ = src[k].(map[string]any)
		}
		last := keys[len(keys)-1]
		if v, ok := src[last]; ok {
			dst[last] = v
		} else {
			delete(dst, last)
		}
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
