package selftest

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/slipway-dev/slipway/test/sandbox/artifacts"
	"github.com/slipway-dev/slipway/test/sandbox/sandboxapi"
)

var (
	// InstallScript prepares a bare sandbox host the way the kubeadm documentation does, without
	// slipway: it installs kubeadm, kubelet and kubectl from the sandbox's apt repository and
	// points containerd at the registry mirror. Arguments: FILES_URL MINOR DEB_VERSION
	// REGISTRY_URL KUBERNETES_VERSION CONTAINERD_RELEASES CONTAINERD_VERSION (see InstallArgs). The
	// apply benchmark uses it for its raw-kubeadm baseline.
	//go:embed install.sh
	InstallScript string
	// InitScript runs kubeadm init on a prepared host and prints the join command. Arguments:
	// VERSION ADVERTISE_IP POD_CIDR RESOLV_CONF [ENDPOINT [CERTIFICATE_KEY]]; with a certificate
	// key it uploads the control-plane certificates for control-plane joins.
	//go:embed init.sh
	InitScript string
	//go:embed cni.sh
	cniScript string
)

// podCIDR is the cluster's pod network; kubeadm hands each node a /24 of it.
const podCIDR = "10.244.0.0/16"

// Timing is how long one step took.
type Timing struct {
	Step     string
	Duration time.Duration
}

// Result is what a self-test measured and saw.
type Result struct {
	Timings []Timing
	// Nodes is `kubectl get nodes` at the end.
	Nodes string
}

// Options tune a self-test run.
type Options struct {
	// Keep leaves the two hosts and their cluster in place, for a person to look at.
	Keep bool
	// Version is the Kubernetes version to install; default the sandbox's (slipway.yaml's).
	Version string
}

// Run runs the self-test on two hosts it adds to sb and removes afterwards, printing progress
// and the timings to w.
func Run(ctx context.Context, sb *sandboxapi.Sandbox, w io.Writer, opts Options) (res *Result, err error) {
	res = &Result{}
	t := &test{sb: sb, w: w, res: res, version: opts.Version}
	if t.version == "" {
		t.version = sb.Kubernetes
	}
	defer func() {
		if !opts.Keep {
			err = errors.Join(err, t.cleanup(context.WithoutCancel(ctx)))
		}
		t.report()
	}()
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"add 2 bare hosts", t.addHosts},
		{"install from apt, configure containerd", t.install},
		{"kubeadm init", t.init},
		{"kubeadm join", t.join},
		{"pod routes", t.network},
		{"nodes Ready", t.ready},
		{"CoreDNS available", t.coreDNS},
	}
	start := time.Now()
	for _, s := range steps {
		st := time.Now()
		fmt.Fprintf(w, "selftest: %s …\n", s.name)
		if err := s.run(ctx); err != nil {
			return res, fmt.Errorf("selftest, %s: %w", s.name, err)
		}
		res.Timings = append(res.Timings, Timing{s.name, time.Since(st)})
	}
	res.Timings = append(res.Timings, Timing{"total (kubeadm cluster Ready)", time.Since(start)})
	return res, nil
}

type test struct {
	sb         *sandboxapi.Sandbox
	w          io.Writer
	res        *Result
	cp, worker sandboxapi.Host
	added      []string
	joinCmd    string
	version    string
}

func (t *test) addHosts(ctx context.Context) error {
	for _, h := range []struct {
		name string
		role sandboxapi.Role
		dst  *sandboxapi.Host
	}{{"selftest-cp", sandboxapi.ControlPlane, &t.cp}, {"selftest-worker", sandboxapi.Worker, &t.worker}} {
		// A kept or interrupted earlier run leaves its hosts: start from bare ones again.
		if _, ok := t.sb.Host(h.name); ok {
			if err := t.sb.RemoveHost(ctx, h.name); err != nil {
				return err
			}
		}
		host, err := t.sb.AddHost(ctx, h.name, h.role)
		if err != nil {
			return err
		}
		t.added = append(t.added, h.name)
		*h.dst = host
	}
	return nil
}

// InstallArgs are InstallScript's arguments for installing Kubernetes version from sb's assets
// host, with the containerd release the sandbox serves.
func InstallArgs(sb *sandboxapi.Sandbox, version string) []string {
	minor := version[:strings.LastIndex(version, ".")]
	debVersion := strings.TrimPrefix(version, "v") + "-1.1"
	return []string{sb.Assets.Files, minor, debVersion, sb.Assets.Registry, version,
		sb.Assets.ContainerdReleases(), artifacts.ContainerdVersion}
}

// JoinPreflight is the flag that kubeadm join on sb's hosts needs: Go 1.26 rejects kubeadm's
// HTTPProxyCIDR check (see init.sh), and on cgroup v1 kubeadm's SystemVerification fails whatever
// the kubelet's failCgroupV1 says.
func JoinPreflight(sb *sandboxapi.Sandbox) string {
	if sb.CgroupV1 {
		return "--ignore-preflight-errors=HTTPProxyCIDR,SystemVerification"
	}
	return "--ignore-preflight-errors=HTTPProxyCIDR"
}

func (t *test) install(ctx context.Context) error {
	return t.both(ctx, func(h sandboxapi.Host) error {
		_, err := t.sb.RunScript(ctx, h, InstallScript, InstallArgs(t.sb, t.version)...)
		return err
	})
}

func (t *test) init(ctx context.Context) error {
	out, err := t.sb.RunScript(ctx, t.cp, InitScript, t.version, t.cp.IP, podCIDR, t.sb.Assets.ResolvConf)
	if err != nil {
		return err
	}
	t.joinCmd = strings.TrimSpace(out)
	if !strings.HasPrefix(t.joinCmd, "kubeadm join ") {
		return fmt.Errorf("kubeadm token create printed %q, not a join command", t.joinCmd)
	}
	return nil
}

func (t *test) join(ctx context.Context) error {
	_, err := t.sb.Run(ctx, t.worker, t.joinCmd+" "+JoinPreflight(t.sb)+" --cri-socket unix:///run/containerd/containerd.sock >/root/kubeadm-join.log 2>&1 || { tail -30 /root/kubeadm-join.log >&2; exit 1; }")
	return err
}

// both runs fn on the control plane and the worker at once.
func (t *test) both(ctx context.Context, fn func(sandboxapi.Host) error) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []sandboxapi.Host{t.cp, t.worker} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(h) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (t *test) cleanup(ctx context.Context) error {
	var errs []error
	for _, name := range t.added {
		errs = append(errs, t.sb.RemoveHost(ctx, name))
	}
	return errors.Join(errs...)
}

func (t *test) report() {
	fmt.Fprintf(t.w, "\nselftest timings (raw kubeadm %s, 1 control plane + 1 worker):\n", t.version)
	for _, tm := range t.res.Timings {
		fmt.Fprintf(t.w, "  %-40s %6.1fs\n", tm.Step, tm.Duration.Seconds())
	}
	if t.res.Nodes != "" {
		fmt.Fprintf(t.w, "\n%s\n", t.res.Nodes)
	}
}
