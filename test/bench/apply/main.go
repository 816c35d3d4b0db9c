// Command apply is issue 5's benchmark: slipway apply against raw kubeadm on the same sandbox
// hosts. It brings up its own sandbox (3 control planes and 1 worker behind the load balancer)
// and measures, in this order:
//
//  1. the raw-kubeadm baseline: the packages, kubeadm init, two control-plane joins (one at a
//     time), the worker join and flannel, run by minimal scripts without slipway, until every
//     node is Ready;
//  2. the raw-kubeadm upgrade of that cluster to the next minor, node by node as the kubeadm
//     documentation gives it (kubeadm upgrade, drain, kubelet, uncordon, Ready);
//  3. after recreating the four hosts bare: a fresh HA `slipway apply`, then no-op re-applies,
//     then `slipway apply` with the next minor (the upgrade).
//
// It prints every phase and a summary with the ratios the issue sets targets for (fresh apply ≤
// 1.15× the baseline, no-op ≤ 5 s, upgrade ≤ 0.7× its raw kubeadm steps and ≤ 75 s a control
// plane). The upgrade runs with --verbose --log-format json, so that it can print each node's
// stages and kubeadm's time per static pod. It takes about 30 minutes on 2 cores once the
// sandbox artifacts are cached; -upgrade=false leaves out both upgrades and takes about 6;
// -baseline=false leaves out the raw-kubeadm side (about 11 minutes with the upgrade) and
// prints slipway's figures without ratios.
//
//	go run ./test/bench/apply [-from v1.35.4] [-to v1.36.3] [-noop 5] [-upgrade=false] [-baseline=false] [-keep]
package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slipway-dev/slipway/pkg/addons"
	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
	"github.com/slipway-dev/slipway/test/sandbox/selftest"
)

//go:embed upgrade.sh
var upgradeScript string

const kubectl = "kubectl --kubeconfig /etc/kubernetes/admin.conf "

func main() {
	from := flag.String("from", sandboxapi.DefaultVersions[0], "Kubernetes version to install")
	to := flag.String("to", sandboxapi.DefaultVersions[1], "Kubernetes version to upgrade to (the next minor)")
	noops := flag.Int("noop", 5, "no-op re-applies to time")
	keep := flag.Bool("keep", false, "leave the sandbox up afterwards")
	subnet := flag.String("subnet", "172.30.240.0/24", "sandbox network")
	upgrade := flag.Bool("upgrade", true, "measure the upgrade too (about 20 minutes more); false measures install and no-op only")
	baseline := flag.Bool("baseline", true, "measure the raw-kubeadm baseline too (about 11 minutes with the upgrade); false measures slipway alone, without ratios")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, options{from: *from, to: *to, noops: *noops, keep: *keep, upgrade: *upgrade, baseline: *baseline, subnet: *subnet}); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	from, to          string
	noops             int
	keep              bool
	upgrade, baseline bool
	subnet            string
}

type bench struct {
	sb       *sandboxapi.Sandbox
	from, to string
	cps      []sandboxapi.Host
	worker   sandboxapi.Host
	work     string
	slipway  string
	report   []string
}

func run(ctx context.Context, o options) (err error) {
	from, to, noops, keep, withUpgrade := o.from, o.to, o.noops, o.keep, o.upgrade
	work, err := os.MkdirTemp("", "slipway-bench-apply-")
	if err != nil {
		return err
	}
	b := &bench{from: from, to: to, work: work, slipway: filepath.Join(work, "slipway")}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", b.slipway, "./cmd/slipway").CombinedOutput(); err != nil {
		return fmt.Errorf("building slipway (run from the repository root): %v\n%s", err, out)
	}
	phase("sandbox up (4 hosts and a load balancer)")
	b.sb, err = sandboxapi.Up(ctx, sandboxapi.Options{
		Name: "bench", Dir: filepath.Join(work, "sandbox"), Subnet: o.subnet, Hosts: 4, ControlPlanes: 3, LB: true,
		Kubernetes: from, Log: os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() {
		if keep {
			fmt.Printf("kept the sandbox: go run ./test/sandbox down --dir %s\n", b.sb.Dir)
			return
		}
		err = errors.Join(err, b.sb.Down(context.WithoutCancel(ctx)))
		os.RemoveAll(work)
	}()
	for _, h := range b.sb.Hosts {
		switch h.Role {
		case sandboxapi.ControlPlane:
			b.cps = append(b.cps, h)
		case sandboxapi.Worker:
			b.worker = h
		}
	}
	sort.Slice(b.cps, func(i, j int) bool { return b.cps[i].Name < b.cps[j].Name })

	var baseInstall, baseUpgrade, kubeadmOnly time.Duration
	if o.baseline {
		if baseInstall, err = b.baseline(ctx); err != nil {
			return fmt.Errorf("raw kubeadm baseline: %w", err)
		}
		if withUpgrade {
			if baseUpgrade, kubeadmOnly, err = b.baselineUpgrade(ctx); err != nil {
				return fmt.Errorf("raw kubeadm upgrade: %w", err)
			}
		}
		phase("recreate the 4 hosts bare")
		for _, h := range append(append([]sandboxapi.Host{}, b.cps...), b.worker) {
			if err := b.sb.Recreate(ctx, h.Name, false); err != nil {
				return err
			}
		}
	}
	manifest := b.sb.Path("slipway.yaml")
	phase("slipway apply: fresh HA cluster at " + from)
	apply, err := b.apply(ctx, manifest, "")
	if err != nil {
		return err
	}
	var noop []time.Duration
	for i := 0; i < noops; i++ {
		phase(fmt.Sprintf("slipway apply: no-op %d/%d", i+1, noops))
		d, err := b.apply(ctx, manifest, "")
		if err != nil {
			return err
		}
		noop = append(noop, d)
	}
	var upgrade time.Duration
	var nodes []hostUpgrade
	if withUpgrade {
		upgraded, err := b.manifestAt(to)
		if err != nil {
			return err
		}
		phase("slipway apply: upgrade to " + to + " (progress as JSON in " + b.upgradeLog() + ")")
		if upgrade, err = b.apply(ctx, upgraded, b.upgradeLog()); err != nil {
			return err
		}
		if nodes, err = b.readBreakdown(); err != nil {
			return err
		}
	}

	sort.Slice(noop, func(i, j int) bool { return noop[i] < noop[j] })
	fmt.Printf("\nresults (3 control planes + 1 worker, %s → %s):\n", from, to)
	if o.baseline {
		fmt.Printf("  %-52s %8s\n", "raw kubeadm HA install (baseline)", secs(baseInstall))
		fmt.Printf("  %-52s %8s  %.2f× baseline (target ≤ 1.15×)\n", "slipway apply, fresh HA cluster", secs(apply), ratio(apply, baseInstall))
	} else {
		fmt.Printf("  %-52s %8s  (no baseline run)\n", "slipway apply, fresh HA cluster", secs(apply))
	}
	if len(noop) > 0 {
		fmt.Printf("  %-52s %8s  min %s, max %s (target ≤ 5 s)\n", fmt.Sprintf("slipway apply, no-op (median of %d)", len(noop)),
			secs(noop[len(noop)/2]), secs(noop[0]), secs(noop[len(noop)-1]))
	}
	if withUpgrade && o.baseline {
		fmt.Printf("  %-52s %8s\n", "raw kubeadm upgrade, every step (baseline)", secs(baseUpgrade))
		fmt.Printf("  %-52s %8s\n", "  of which kubeadm upgrade apply/node alone", secs(kubeadmOnly))
		fmt.Printf("  %-52s %8s  %.2f× baseline (target ≤ 0.7×)\n", "slipway apply, upgrade", secs(upgrade), ratio(upgrade, baseUpgrade))
	} else if withUpgrade {
		fmt.Printf("  %-52s %8s  (no baseline run)\n", "slipway apply, upgrade", secs(upgrade))
	}
	if len(nodes) > 0 {
		fmt.Printf("\nupgrade, node by node (target ≤ 75 s a control plane):\n")
		printBreakdown(os.Stdout, nodes)
	}
	fmt.Println("\nphases:")
	for _, l := range b.report {
		fmt.Println("  " + l)
	}
	return nil
}

// baseline builds the HA cluster with raw kubeadm and returns the time until every node is Ready.
func (b *bench) baseline(ctx context.Context) (time.Duration, error) {
	res, err := config.Load(ctx, config.Options{ManifestPath: b.sb.Path("slipway.yaml"), TerraformSource: b.sb.Path("tf.json")})
	if err != nil {
		return 0, err
	}
	cni, err := addons.Render(res.Cluster)
	if err != nil {
		return 0, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return 0, err
	}
	certKey := hex.EncodeToString(key)
	all := append(append([]sandboxapi.Host{}, b.cps...), b.worker)
	leader := b.cps[0]
	var join string
	start := time.Now()
	steps := []struct {
		name string
		run  func() error
	}{
		{"baseline: packages and containerd on 4 hosts", func() error {
			return parallel(all, func(h sandboxapi.Host) error {
				if _, err := b.sb.RunScript(ctx, h, selftest.InstallScript, selftest.InstallArgs(b.sb, b.from)...); err != nil {
					return err
				}
				// flannel's images are mirrored too, as slipway's manifest does.
				_, err := b.sb.Run(ctx, h, "mkdir -p /etc/containerd/certs.d/ghcr.io && printf '[host.\"%s\"]\\n  capabilities = [\"pull\", \"resolve\"]\\n' "+
					quote(b.sb.Assets.Registry)+" >/etc/containerd/certs.d/ghcr.io/hosts.toml")
				return err
			})
		}},
		{"baseline: kubeadm init on " + leader.Name, func() error {
			out, err := b.sb.RunScript(ctx, leader, selftest.InitScript, b.from, leader.IP, res.Cluster.ClusterNetwork.PodSubnet, b.sb.Assets.ResolvConf, b.sb.Endpoint, certKey)
			join = strings.TrimSpace(out)
			return err
		}},
	}
	for _, cp := range b.cps[1:] {
		steps = append(steps, struct {
			name string
			run  func() error
		}{"baseline: kubeadm join --control-plane on " + cp.Name, func() error {
			_, err := b.sb.Run(ctx, cp, join+" --control-plane --certificate-key "+certKey+" --apiserver-advertise-address "+cp.IP+
				" "+selftest.JoinPreflight(b.sb)+" --cri-socket unix:///run/containerd/containerd.sock >/root/kubeadm-join.log 2>&1 || { tail -30 /root/kubeadm-join.log >&2; exit 1; }")
			return err
		}})
	}
	steps = append(steps, []struct {
		name string
		run  func() error
	}{
		{"baseline: kubeadm join on " + b.worker.Name, func() error {
			_, err := b.sb.Run(ctx, b.worker, join+" "+selftest.JoinPreflight(b.sb)+" --cri-socket unix:///run/containerd/containerd.sock >/root/kubeadm-join.log 2>&1 || { tail -30 /root/kubeadm-join.log >&2; exit 1; }")
			return err
		}},
		{"baseline: flannel", func() error {
			_, err := b.sb.RunScript(ctx, leader, kubectl+"apply -f - >/dev/null <<'SLIPWAY_BENCH_EOF'\n"+string(cni)+"\nSLIPWAY_BENCH_EOF\n")
			return err
		}},
		{"baseline: every node Ready", func() error {
			return poll(ctx, 5*time.Minute, "4 Ready nodes", func() error { return b.nodesAt(ctx, b.from, 4) })
		}},
	}...)
	for _, s := range steps {
		if err := b.timed(s.name, s.run); err != nil {
			return 0, err
		}
	}
	total := time.Since(start)
	b.report = append(b.report, fmt.Sprintf("%-60s %8s", "baseline: total", secs(total)))
	return total, nil
}

// baselineUpgrade upgrades the baseline cluster node by node and returns the total and the
// time spent in the kubeadm commands alone.
func (b *bench) baselineUpgrade(ctx context.Context) (total, kubeadmOnly time.Duration, err error) {
	minor, deb := minorOf(b.to), debOf(b.to)
	leader := b.cps[0]
	start := time.Now()
	for i, h := range append(append([]sandboxapi.Host{}, b.cps...), b.worker) {
		role := "other"
		if i == 0 {
			role = "first"
		}
		ks := time.Now()
		err := b.timed("raw upgrade: kubeadm on "+h.Name, func() error {
			_, err := b.sb.RunScript(ctx, h, upgradeScript, "kubeadm", b.sb.Assets.Files, minor, deb, b.to, role)
			return err
		})
		kubeadmOnly += time.Since(ks)
		if err != nil {
			return 0, 0, err
		}
		steps := []struct {
			name string
			run  func() error
		}{
			{"drain", func() error {
				return b.kubectlRetried(ctx, leader, "drain "+h.Name+" --ignore-daemonsets --delete-emptydir-data --timeout=5m")
			}},
			{"kubelet and kubectl", func() error {
				_, err := b.sb.RunScript(ctx, h, upgradeScript, "kubelet", b.sb.Assets.Files, minor, deb, b.to, role)
				return err
			}},
			{"uncordon, Ready at " + b.to, func() error {
				if err := b.kubectlRetried(ctx, leader, "uncordon "+h.Name); err != nil {
					return err
				}
				return poll(ctx, 5*time.Minute, h.Name+" Ready at "+b.to, func() error { return b.nodeAt(ctx, h.Name, b.to) })
			}},
		}
		for _, s := range steps {
			if err := b.timed("raw upgrade: "+s.name+" on "+h.Name, s.run); err != nil {
				return 0, 0, err
			}
		}
	}
	total = time.Since(start)
	b.report = append(b.report, fmt.Sprintf("%-60s %8s", "raw upgrade: total", secs(total)))
	return total, kubeadmOnly, nil
}

// kubectlRetried runs kubectl on host with the admin kubeconfig, retried for 2 minutes as an
// operator would re-run it: right after a control plane's kubelet restart its API server may
// restart too and answer for a moment without its authorizer (Forbidden) or not at all.
func (b *bench) kubectlRetried(ctx context.Context, host sandboxapi.Host, args string) error {
	return poll(ctx, 2*time.Minute, "kubectl "+args, func() error {
		_, err := b.sb.Run(ctx, host, kubectl+args)
		return err
	})
}

// apply runs slipway apply with the sandbox's Terraform output and returns how long it took.
// With a jsonLog path it runs with --verbose --log-format json and keeps that progress there
// as well as on stderr.
func (b *bench) apply(ctx context.Context, manifest, jsonLog string) (time.Duration, error) {
	args := []string{"apply", "-m", manifest, "-t", b.sb.Path("tf.json"), "--auto-approve"}
	if jsonLog != "" {
		args = append(args, "--verbose", "--log-format", "json")
	}
	cmd := exec.CommandContext(ctx, b.slipway, args...)
	cmd.Dir = b.work
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(b.work, "config"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if jsonLog != "" {
		f, err := os.Create(jsonLog)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		cmd.Stderr = io.MultiWriter(os.Stderr, f)
	}
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	b.report = append(b.report, fmt.Sprintf("%-60s %8s", "slipway apply -m "+filepath.Base(manifest), secs(d)))
	if err != nil {
		return d, fmt.Errorf("slipway apply -m %s: %w", manifest, err)
	}
	return d, nil
}

// upgradeLog is where the upgrade's JSON progress is kept (in the work directory, which -keep
// keeps).
func (b *bench) upgradeLog() string { return filepath.Join(b.work, "upgrade.jsonl") }

func (b *bench) readBreakdown() ([]hostUpgrade, error) {
	f, err := os.Open(b.upgradeLog())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return breakdown(f)
}

// manifestAt writes a copy of the sandbox manifest at another Kubernetes version.
func (b *bench) manifestAt(version string) (string, error) {
	data, err := os.ReadFile(b.sb.Path("slipway.yaml"))
	if err != nil {
		return "", err
	}
	old := "kubernetes: " + b.from
	if !strings.Contains(string(data), old) {
		return "", fmt.Errorf("%s does not contain %q", b.sb.Path("slipway.yaml"), old)
	}
	path := filepath.Join(b.sb.Dir, "slipway-"+version+".yaml")
	return path, os.WriteFile(path, []byte(strings.Replace(string(data), old, "kubernetes: "+version, 1)), 0o600)
}

func (b *bench) nodesAt(ctx context.Context, version string, n int) error {
	out, err := b.sb.Run(ctx, b.cps[0], kubectl+`get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'`)
	if err != nil {
		return err
	}
	ready := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == version && f[2] == "True" {
			ready++
		}
	}
	if ready != n {
		return fmt.Errorf("%d of %d nodes Ready at %s:\n%s", ready, n, version, out)
	}
	return nil
}

func (b *bench) nodeAt(ctx context.Context, name, version string) error {
	out, err := b.sb.Run(ctx, b.cps[0], kubectl+"get node "+name+` -o jsonpath='{.status.nodeInfo.kubeletVersion} {.status.conditions[?(@.type=="Ready")].status} {.spec.unschedulable}'`)
	if err != nil {
		return err
	}
	if f := strings.Fields(out); len(f) < 2 || f[0] != version || f[1] != "True" || len(f) > 2 && f[2] == "true" {
		return fmt.Errorf("node %s: kubelet, Ready, unschedulable = %q", name, out)
	}
	return nil
}

// poll waits until check passes, saying what it waited for and what it saw last on timeout.
func poll(ctx context.Context, timeout time.Duration, what string, check func() error) error {
	return kube.Wait(ctx, what, timeout, func(context.Context) (bool, string, error) {
		if err := check(); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
}

func (b *bench) timed(name string, fn func() error) error {
	phase(name)
	start := time.Now()
	err := fn()
	b.report = append(b.report, fmt.Sprintf("%-60s %8s", name, secs(time.Since(start))))
	return err
}

func parallel(hosts []sandboxapi.Host, fn func(sandboxapi.Host) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(h) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func phase(s string) { fmt.Fprintf(os.Stderr, "\n==> %s %s\n", time.Now().Format("15:04:05"), s) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

func minorOf(v string) string { return v[:strings.LastIndex(v, ".")] }

func debOf(v string) string { return strings.TrimPrefix(v, "v") + "-1.1" }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
