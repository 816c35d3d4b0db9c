package encryption

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/pkg/yamlfmt"
)

// Paths on the control planes. The directory is root-only and mounted read-only into the
// kube-apiserver static pod; the file is root-only (0600): it holds the keys.
const (
	Dir  = "/etc/kubernetes/encryption"
	File = Dir + "/config.yaml"
)

// Provider is the one provider slipway encrypts with: aescbc (AES-CBC with PKCS#7 padding and a
// 32-byte key). Kubernetes' documentation recommends neither aescbc nor secretbox over the other
// for keys kept on disk; aescbc is chosen because it is the provider the Kubernetes and kubeadm
// documentation use in their examples and the one operators and tools (etcdctl inspections,
// audits that look for "k8s:enc:aescbc:v1:") know, and every kube-apiserver slipway supports
// reads it. secretbox would be as good; switching later would be one more rotation.
const Provider = "aescbc"

// MaxFileBytes bounds the file as slipway reads it from a control plane or a backup: one
// holds a key or two (about a hundred bytes each), and a file of this size would hold hundreds.
const MaxFileBytes = 64 << 10

// KeySize is the size of an aescbc key: 32 bytes selects AES-256.
const KeySize = 32

// StoredPrefix is how etcd values encrypted with the key named name begin.
func StoredPrefix(name string) string { return "k8s:enc:" + Provider + ":v1:" + name + ":" }

// Key is one aescbc key. Secret is the key material: never print it.
type Key struct {
	Name   string
	Secret []byte
}

// Config is the encryption configuration of the cluster's Secrets, as the file on the control
// planes holds it.
type Config struct {
	// Keys are the aescbc keys in the file's order: the first encrypts what the API server writes
	// (unless IdentityFirst), every one decrypts.
	Keys []Key
	// IdentityFirst puts the identity provider before aescbc: the API servers write Secrets in
	// plain text but read both. It is the first stage of enabling encryption on a running
	// cluster, so that no API server writes what another cannot read yet.
	IdentityFirst bool
	// Rewritten names the key every Secret was last rewritten under (a comment in the file, which
	// kube-apiserver ignores). It tells an interrupted rewrite from a finished one.
	Rewritten string
}

// keyName is how slipway names its keys: key-1, key-2, … in the order they were made.
var keyName = regexp.MustCompile(`^key-([1-9][0-9]{0,8})$`)

// KeyNumber returns n of a key named key-n, 0 for another name.
func KeyNumber(name string) int {
	m := keyName.FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// NewKey returns a key named name with 32 random bytes from this process. Apply makes its keys
// on the leader instead (Hosts.NewKey); tests and Hosts that are local use this.
func NewKey(name string) (Key, error) {
	b := make([]byte, KeySize)
	if _, err := rand.Read(b); err != nil {
		return Key{}, fmt.Errorf("making an encryption key: %w", err)
	}
	return Key{Name: name, Secret: b}, nil
}

// NextKeyName names the key that comes after every key of c: key-(highest number + 1).
func (c Config) NextKeyName() string {
	n := 0
	for _, k := range c.Keys {
		n = max(n, KeyNumber(k.Name))
	}
	return "key-" + strconv.Itoa(n+1)
}

// The file's own format (apiserver.config.k8s.io/v1 EncryptionConfiguration), the part slipway
// writes.
type fileConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Resources  []fileResource `json:"resources"`
}

type fileResource struct {
	Resources []string       `json:"resources"`
	Providers []fileProvider `json:"providers"`
}

type fileProvider struct {
	AESCBC   *fileAESCBC `json:"aescbc,omitempty"`
	Identity *struct{}   `json:"identity,omitempty"`
}

type fileAESCBC struct {
	Keys []fileKey `json:"keys"`
}

type fileKey struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

const (
	apiVersion    = "apiserver.config.k8s.io/v1"
	kind          = "EncryptionConfiguration"
	header        = "# Written by slipway: the keys that encrypt Secrets at rest. Do not edit: slipway apply\n# reads the state of a key rotation from this file, and every control plane holds the same.\n"
	rewrittenNote = "# slipway-rewritten: "
)

// Render returns the file for c. It holds the keys: write it with mode 0600 and never print it.
func Render(c Config) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	aes := fileProvider{AESCBC: &fileAESCBC{}}
	for _, k := range c.Keys {
		aes.AESCBC.Keys = append(aes.AESCBC.Keys, fileKey{Name: k.Name, Secret: base64.StdEncoding.EncodeToString(k.Secret)})
	}
	// identity stays in the list after aescbc, so that Secrets written before encryption was
	// enabled (or by an API server without it) still read.
	providers := []fileProvider{aes, {Identity: &struct{}{}}}
	if c.IdentityFirst {
		providers[0], providers[1] = providers[1], providers[0]
	}
	out, err := yamlfmt.Marshal(fileConfig{APIVersion: apiVersion, Kind: kind,
		Resources: []fileResource{{Resources: []string{"secrets"}, Providers: providers}}})
	if err != nil {
		return nil, errors.New("encoding the encryption configuration failed")
	}
	var b bytes.Buffer
	b.WriteString(header)
	if c.Rewritten != "" {
		b.WriteString(rewrittenNote + c.Rewritten + "\n")
	}
	b.Write(out)
	return b.Bytes(), nil
}

// check refuses a configuration kube-apiserver would refuse, or one slipway did not write. Its
// errors name keys, never their material.
func (c Config) check() error {
	if len(c.Keys) == 0 {
		return errors.New("an encryption configuration needs a key")
	}
	seen := map[string]bool{}
	for _, k := range c.Keys {
		if KeyNumber(k.Name) == 0 {
			return fmt.Errorf("encryption key name %q: slipway names its keys key-1, key-2, …", k.Name)
		}
		if seen[k.Name] {
			return fmt.Errorf("encryption key %s is in the configuration twice", k.Name)
		}
		seen[k.Name] = true
		if len(k.Secret) != KeySize {
			return fmt.Errorf("encryption key %s has %d bytes, not %d", k.Name, len(k.Secret), KeySize)
		}
	}
	if c.Rewritten != "" && KeyNumber(c.Rewritten) == 0 {
		return fmt.Errorf("the rewritten mark %q names no key", c.Rewritten)
	}
	return nil
}

// Parse reads a file Render wrote. Its errors never quote the file, which holds the keys.
func Parse(data []byte) (Config, error) {
	var c Config
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, rewrittenNote); ok {
			c.Rewritten = strings.TrimSpace(v)
		}
	}
	var f fileConfig
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		// The decoder's message may quote the file: say only where it is.
		return Config{}, fmt.Errorf("%s is not an encryption configuration slipway wrote (it does not decode; its content is not shown)", File)
	}
	notOurs := func(why string) (Config, error) {
		return Config{}, fmt.Errorf("%s is not an encryption configuration slipway wrote: %s", File, why)
	}
	if f.APIVersion != apiVersion || f.Kind != kind {
		return notOurs("apiVersion or kind")
	}
	if len(f.Resources) != 1 || len(f.Resources[0].Resources) != 1 || f.Resources[0].Resources[0] != "secrets" {
		return notOurs("it must encrypt secrets, and only secrets")
	}
	ps := f.Resources[0].Providers
	if len(ps) != 2 {
		return notOurs("it must have the providers aescbc and identity")
	}
	aes := ps[0].AESCBC
	switch {
	case ps[0].Identity != nil && ps[0].AESCBC == nil && ps[1].AESCBC != nil && ps[1].Identity == nil:
		c.IdentityFirst, aes = true, ps[1].AESCBC
	case ps[0].AESCBC != nil && ps[0].Identity == nil && ps[1].Identity != nil && ps[1].AESCBC == nil:
	default:
		return notOurs("it must have the providers aescbc and identity")
	}
	for _, k := range aes.Keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return Config{}, fmt.Errorf("%s: the secret of key %q is not base64", File, k.Name)
		}
		c.Keys = append(c.Keys, Key{Name: k.Name, Secret: secret})
	}
	if err := c.check(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", File, err)
	}
	return c, nil
}

// Hash is how kube-apiserver names a configuration file's content in its metrics
// (apiserver_encryption_config_controller_last_config_info's hash label): "sha256:" and the
// hex SHA-256 of the bytes. It reveals nothing of the keys.
func Hash(data []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(data)) }
