package phases

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// The encryption phases make the API servers encrypt Secrets at rest (encryption.enabled) on a
// running cluster, and rotate the key. The keys are made on the control planes' behalf here, in
// memory, and copied from one control plane to another through memory too: they are written
// only as the root-only file on each control plane (package encryption owns its format), never
// to this machine, and never into a command line, verbose output, progress or an error; each key
// read or written is registered as a secret besides, so that verbose output and errors hide it
// should anything ever repeat it. What the phases say names keys (key-1) and files by hash.
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

// controlPlaneNodes returns the control planes, the leader first.
func controlPlaneNodes(r encryptionRun) ([]Node, error) {
	var out []Node
	for _, in := range r.Nodes() {
		if in.Role != plan.ControlPlane {
			continue
		}
		n, err := r.Node(in.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// hideKeys registers every key of a configuration file as a secret. data that does not parse
// hides nothing, and says nothing of itself.
func hideKeys(r interface{ hide(values ...string) }, data []byte) (encryption.Config, error) {
	c, err := encryption.Parse(data)
	if err != nil {
		return c, err
	}
	for _, k := range c.Keys {
		r.hide(base64.StdEncoding.EncodeToString(k.Secret))
	}
	return c, nil
}

// sourceConfig reads the encryption configuration that is the truth: the leader's, else the
// first control plane's that has one, skipping skip (a host that joins, whose leftover file
// would not be). ok is false when no control plane has one.
func sourceConfig(ctx context.Context, r encryptionRun, cps []Node, skip string) (c encryption.Config, data []byte, from string, ok bool, err error) {
	for _, n := range cps {
		if n.Name == skip {
			continue
		}
		e, err := access.ReadEncryption(ctx, n.SSH)
		if err != nil {
			return c, nil, "", false, fmt.Errorf("reading the encryption configuration of %s: %w", n.Name, err)
		}
		if e.Data == nil {
			continue
		}
		c, err := hideKeys(r, e.Data)
		if err != nil {
			return c, nil, "", false, fmt.Errorf("%s: %w", n.Name, err)
		}
		return c, e.Data, n.Name, true, nil
	}
	return c, nil, "", false, nil
}

// source is the control planes, the leader first, and the encryption configuration that is the
// truth among them (see sourceConfig); from is "" when none holds one.
type source struct {
	cps  []Node
	c    encryption.Config
	data []byte
	from string
}

func readSource(ctx context.Context, r encryptionRun) (source, error) {
	cps, err := controlPlaneNodes(r)
	if err != nil {
		return source{}, err
	}
	c, data, from, _, err := sourceConfig(ctx, r, cps, "")
	return source{cps: cps, c: c, data: data, from: from}, err
}

// shortHash is a file's hash as progress shows it.
func shortHash(h string) string { return h[:min(len(h), len("sha256:")+12)] }

// writeEncryption puts data as the encryption configuration file on n: the directory root-only,
// the file 0600, replaced atomically (the API server never reads half a file).
func writeEncryption(ctx context.Context, n Node, data []byte) error {
	if err := n.SSH.Command(ctx, "install", "-d", "-m", "0700", "-o", "root", "-g", "root", path.Dir(encryption.File)).Run(); err != nil {
		return err
	}
	return n.SSH.Upload(ctx, bytes.NewReader(data), encryption.File, 0o600, "root:root")
}

// encryptionHosts are the control planes as encryption.Converge drives them.
type encryptionHosts struct {
	r   encryptionRun
	cps []Node
}

func (h encryptionHosts) NewKey(ctx context.Context, name string) (encryption.Key, error) {
	leader, err := h.r.Leader()
	if err != nil {
		return encryption.Key{}, err
	}
	return leaderKey(ctx, h.r, leader, name)
}

// leaderKey makes a key on the leader: 32 bytes from its kernel's random source into a
// root-only file in the encryption directory, which this run reads (Download: never a command's
// output, which verbose output shows) and removes. A run killed in between leaves the file,
// root-only, until the next key made there replaces it; it encrypts nothing.
func leaderKey(ctx context.Context, r interface {
	logger
	hide(values ...string)
}, leader Node, name string) (encryption.Key, error) {
	if encryption.KeyNumber(name) == 0 {
		return encryption.Key{}, fmt.Errorf("encryption key name %q", name)
	}
	tmp := path.Join(encryption.Dir, ".new-"+name)
	script := fmt.Sprintf("set -eu\numask 077\ninstall -d -m 0700 -o root -g root %s\nhead -c %d /dev/urandom > %s.tmp\nmv -f %s.tmp %s\n",
		ssh.Quote(encryption.Dir), encryption.KeySize, ssh.Quote(tmp), ssh.Quote(tmp), ssh.Quote(tmp))
	if err := leader.SSH.Script(ctx, "make "+name, script).Run(); err != nil {
		return encryption.Key{}, err
	}
	var buf bytes.Buffer
	err := leader.SSH.Download(ctx, tmp, &buf)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if rerr := leader.SSH.Command(rctx, "rm", "-f", tmp).Run(); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return encryption.Key{}, err
	}
	if buf.Len() != encryption.KeySize {
		return encryption.Key{}, fmt.Errorf("making %s on %s: got %d random bytes, want %d", name, leader.Name, buf.Len(), encryption.KeySize)
	}
	k := encryption.Key{Name: name, Secret: bytes.Clone(buf.Bytes())}
	r.hide(base64.StdEncoding.EncodeToString(k.Secret))
	r.Logf(leader.Name, "made %s: %d random bytes from the leader's kernel", name, encryption.KeySize)
	return k, nil
}

func (h encryptionHosts) Write(ctx context.Context, data []byte) error {
	if _, err := hideKeys(h.r, data); err != nil {
		return err
	}
	for _, n := range h.cps {
		if err := writeEncryption(ctx, n, data); err != nil {
			return err
		}
		h.r.Logf(n.Name, "encryption configuration %s written", shortHash(encryption.Hash(data)))
	}
	return nil
}

func (h encryptionHosts) WaitLoaded(ctx context.Context, hash string) error {
	for _, n := range h.cps {
		if err := waitLoaded(ctx, h.r, n, hash); err != nil {
			return err
		}
	}
	return nil
}

// waitLoaded waits until n's own API server is ready and reports, in its /metrics, that it
// uses the encryption configuration whose hash is hash (encryption.LoadedMetric).
func waitLoaded(ctx context.Context, r encryptionRun, n Node, hash string) error {
	start := time.Now()
	var c *kube.Client
	what := fmt.Sprintf("the API server of %s to be ready and use the encryption configuration %s", n.Name, shortHash(hash))
	err := kube.Wait(ctx, what, loadedTimeout, func(ctx context.Context) (bool, string, error) {
		if c == nil {
			var err error
			if c, err = r.HostKube(ctx, n); err != nil {
				return false, err.Error(), nil
			}
		}
		if err := c.Healthy(ctx, 10*time.Second); err != nil {
			return false, err.Error(), nil
		}
		raw, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return false, "reading /metrics: " + err.Error(), nil
		}
		got, ok := encryption.LoadedHash(raw)
		switch {
		case !ok:
			return false, "ready, using no encryption configuration", nil
		case got != hash:
			return false, "ready, using the encryption configuration " + shortHash(got), nil
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	r.Logf(n.Name, "API server ready and using %s (%.0fs)", shortHash(hash), time.Since(start).Seconds())
	return nil
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
