package phases

import (
	"context"
	"fmt"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The encryption phases make the API servers encrypt Secrets at rest (encryption.enabled) on a
// running cluster, and rotate the key. Keys are made on the leader, from its kernel's random
// source, and copied from one control plane to another through this process's memory: they are
// written only as the root-only file on each control plane (package encryption owns its
// format), never to this machine, and never into a command line, verbose output, progress or an
// error; each key read or written is registered as a secret besides, so that verbose output and
// errors hide it should anything ever repeat it. What the phases say names keys (key-1) and
// files by hash. encryption_hosts.go has how they reach the control planes.
var (
	_ = register(Phase{
		Name:  plan.StepEncryptionConfig,
		Short: "put the encryption configuration on every control plane (making key-1 if none has one) and into kubeadm's ClusterConfiguration",
		Run:   func(ctx context.Context, r *Run, _ string) error { return encryptionConfig(ctx, r) },
	})
	_ = register(Phase{
		Name:  plan.StepEncryptionServer,
		Short: "restart a control plane's API server with the encryption configuration and wait until it is ready and uses it",
		Run:   func(ctx context.Context, r *Run, host string) error { return encryptionServer(ctx, r, host) },
	})
	_ = register(Phase{
		Name:  plan.StepEncryptSecrets,
		Short: "make the newest key encrypt, rewrite every Secret under it and drop the keys it replaces",
		Run:   func(ctx context.Context, r *Run, _ string) error { return encryptSecrets(ctx, r, false) },
	})
	_ = register(Phase{
		Name:  plan.StepRotateKey,
		Short: "rotate the key that encrypts Secrets at rest, without downtime",
		Run:   func(ctx context.Context, r *Run, _ string) error { return encryptSecrets(ctx, r, true) },
	})
)

// controlPlaneConfig is where the configuration of kubeadm's control-plane phases goes while they run.
const controlPlaneConfig = kubeadmDir + "/control-plane.yaml"

// loadedTimeout bounds the wait for an API server to use a new encryption configuration:
// kube-apiserver looks at the file once a minute, or starts with it after a restart.
const loadedTimeout = 4 * time.Minute

// encryptionRun is what the encryption phases read of a run.
type encryptionRun interface {
	nodes
	api
	logger
	manifest
	Nodes() []*inventory.Node
	Leader() (Node, error)
	NodeParams(n Node) (kubeadm.NodeParams, error)
	KubeletParams() kubeadm.KubeletParams
	HostKube(ctx context.Context, n Node) (*kube.Client, error)
	hide(values ...string)
}

// HostKube returns an admin client of n's own API server (see access.Cluster.HostKube).
func (r *Run) HostKube(ctx context.Context, n Node) (*kube.Client, error) {
	return r.cfg.API.HostKube(ctx, n.SSH)
}

// encryptionConfig puts the source's encryption configuration on every control plane, or a new
// one, staged (key-1 read but not written with), when none has one; then kubeadm's
// ClusterConfiguration names it, so that joins and upgrades keep it.
func encryptionConfig(ctx context.Context, r encryptionRun) error {
	leader, err := r.Leader()
	if err != nil {
		return err
	}
	src, err := readSource(ctx, r)
	if err != nil {
		return err
	}
	cps, c, data, from := src.cps, src.c, src.data, src.from
	if from == "" {
		k, err := leaderKey(ctx, r, leader, encryption.FirstKey)
		if err != nil {
			return err
		}
		c = encryption.Staged(k)
		if data, err = encryption.Render(c); err != nil {
			return err
		}
		r.Logf(leader.Name, "the API servers will read %s but not yet write with it", k.Name)
	} else {
		r.Logf(from, "encryption configuration %s: %s", shortHash(encryption.Hash(data)), c.Describe())
	}
	if err := (encryptionHosts{r: r, cps: cps}).Write(ctx, data); err != nil {
		return err
	}
	cfg, err := controlPlaneConfigFor(r, leader)
	if err != nil {
		return err
	}
	if err := kubeadmWithConfig(ctx, leader, controlPlaneConfig, cfg, []string{"init", "phase", "upload-config", "kubeadm"}); err != nil {
		return err
	}
	r.Logf(leader.Name, "kubeadm's ClusterConfiguration names the encryption configuration")
	return nil
}

func controlPlaneConfigFor(r encryptionRun, n Node) ([]byte, error) {
	np, err := r.NodeParams(n)
	if err != nil {
		return nil, err
	}
	return kubeadm.ControlPlaneConfig(r.Manifest(), np, r.KubeletParams())
}

// encryptionServer has kubeadm write host's kube-apiserver static pod again, now with the
// encryption configuration; the kubelet restarts it. The other control planes serve meanwhile.
func encryptionServer(ctx context.Context, r encryptionRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	e, err := access.ReadEncryption(ctx, n.SSH)
	if err != nil {
		return err
	}
	if e.Data == nil {
		return fmt.Errorf("%s has no encryption configuration (%s): run apply again", n.Name, encryption.File)
	}
	if _, err := hideKeys(r, e.Data); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	cfg, err := controlPlaneConfigFor(r, n)
	if err != nil {
		return err
	}
	if err := kubeadmWithConfig(ctx, n, controlPlaneConfig, cfg, []string{"init", "phase", "control-plane", "apiserver"}); err != nil {
		return err
	}
	r.Logf(n.Name, "kubeadm wrote the kube-apiserver static pod with the encryption configuration; the kubelet restarts it")
	return waitLoaded(ctx, r, n, encryption.Hash(e.Data))
}

// encryptSecrets brings the encryption configuration to rest (encryption.Converge), or rotates
// its key first (encryption.Rotate). It starts from the source's file: put on every control
// plane again and waited for, since a killed run may have left some with an older one.
func encryptSecrets(ctx context.Context, r encryptionRun, rotate bool) error {
	src, err := readSource(ctx, r)
	if err != nil {
		return err
	}
	cps, c, data, from := src.cps, src.c, src.data, src.from
	if from == "" {
		return fmt.Errorf("no control plane holds an encryption configuration (%s)", encryption.File)
	}
	r.Logf("", "starting from %s's encryption configuration %s: %s", from, shortHash(encryption.Hash(data)), c.Describe())
	hosts := encryptionHosts{r: r, cps: cps}
	if err := hosts.Write(ctx, data); err != nil {
		return err
	}
	if err := hosts.WaitLoaded(ctx, encryption.Hash(data)); err != nil {
		return err
	}
	kc, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	say := func(s string) { r.Logf("", "%s", s) }
	converge := encryption.Converge
	if rotate {
		converge = encryption.Rotate
	}
	final, n, err := converge(ctx, hosts, kc.Kube, c, say)
	if err != nil {
		return err
	}
	r.Logf("", "Secrets encrypted at rest with %s; %d rewritten in this step", final.Keys[0].Name, n)
	return nil
}

// encryptionStart says how ensureEncryption starts: on a join, at init, or when an interrupted
// init is finished.
type encryptionStart int

const (
	startJoin encryptionStart = iota
	startInit
	startFinish
)

// ensureEncryption puts an encryption configuration on the control plane n before kubeadm
// starts its API server there, when the manifest enables encryption. A join copies another
// control plane's, or nothing when none has one (the cluster has no encryption yet: the plan's
// encryption steps follow, and kubeadm's ClusterConfiguration does not name the file yet). An
// init keeps the leader's own (an interrupted init's) or makes a new one in which key-1
// encrypts from the start. Finishing an interrupted init keeps the leader's too; one that is
// missing there means the API server started without encryption and may have stored Secrets in
// plain text: the new one is staged (key-1 read, not written with), and the next apply
// restarts the API server with it and rewrites every Secret.
func ensureEncryption(ctx context.Context, r encryptionRun, n Node, start encryptionStart) (err error) {
	if !r.Manifest().Encryption.Enabled {
		return nil
	}
	// An init looks at the leader's own file only; a join copies another control plane's,
	// never its own leftover.
	cps, skip := []Node{n}, ""
	if start == startJoin {
		if cps, err = controlPlaneNodes(r); err != nil {
			return err
		}
		skip = n.Name
	}
	_, data, from, ok, err := sourceConfig(ctx, r, cps, skip)
	if err != nil {
		return err
	}
	switch {
	case ok && from == n.Name:
		return nil
	case ok:
		r.Logf(n.Name, "copying %s's encryption configuration %s", from, shortHash(encryption.Hash(data)))
	case start == startJoin:
		return nil
	default:
		k, err := leaderKey(ctx, r, n, encryption.FirstKey)
		if err != nil {
			return err
		}
		c := encryption.Fresh(k)
		if start == startFinish {
			c = encryption.Staged(k)
		}
		if data, err = encryption.Render(c); err != nil {
			return err
		}
	}
	if _, err := hideKeys(r, data); err != nil {
		return err
	}
	return writeEncryption(ctx, n, data)
}

var _ encryptionRun = (*Run)(nil)
