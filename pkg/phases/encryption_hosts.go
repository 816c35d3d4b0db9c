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
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// How the encryption phases reach the control planes: the encryption configuration read from
// each (the source being the leader's), written to each, keys made on the leader, and the wait
// until a control plane's own API server uses a given file.

// controlPlaneNodes returns the control planes in r.Nodes() order: inventory.Nodes puts the
// leader first.
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

// sourceConfig reads the encryption configuration that is the truth: the first control plane's
// in cps (leader first, as inventory.Nodes orders them; the probe's rule) that has one, skipping skip (a host that joins, whose leftover file
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
	secret, err := ssh.ReadFile(ctx, leader.SSH, tmp, encryption.KeySize)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if rerr := leader.SSH.Command(rctx, "rm", "-f", tmp).Run(); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return encryption.Key{}, err
	}
	if len(secret) != encryption.KeySize {
		return encryption.Key{}, fmt.Errorf("making %s on %s: got %d random bytes, want %d", name, leader.Name, len(secret), encryption.KeySize)
	}
	k := encryption.Key{Name: name, Secret: secret}
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
