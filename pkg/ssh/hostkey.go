package ssh

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/slipway-dev/slipway/pkg/internal/bounded"
)

// HostKeyError refuses a host key: the host is unknown (Want is empty), or
// it presented a key other than the one pinned or recorded (Want lists what
// was expected, and where).
type HostKeyError struct {
	Host    string
	Address string
	// Key is the key the host presented.
	Key  xssh.PublicKey
	Want []KnownKey
	// Searched are the known_hosts files that were consulted.
	Searched []string
	// Record is where trust on first use would record the key; empty when
	// the pool has no per-cluster known_hosts file.
	Record  string
	Revoked bool
}

// KnownKey is an expected host key and where it came from.
type KnownKey struct {
	Key xssh.PublicKey
	// File and Line locate a known_hosts entry; File is empty for a key
	// pinned in the manifest or Terraform output.
	File string
	Line int
}

func (k KnownKey) source() string {
	if k.File == "" {
		return "the key pinned for this host (manifest or Terraform output)"
	}
	return fmt.Sprintf("%s:%d", k.File, k.Line)
}

func fingerprint(k xssh.PublicKey) string {
	return k.Type() + " " + xssh.FingerprintSHA256(k)
}

func (e *HostKeyError) Error() string {
	got := fingerprint(e.Key)
	switch {
	case e.Revoked:
		return fmt.Sprintf("host key is revoked: %s is marked @revoked in %s", got, e.Want[0].source())
	case len(e.Want) == 0:
		where := "no known_hosts file is configured"
		if len(e.Searched) > 0 {
			where = "it is not in " + strings.Join(e.Searched, " or ")
		}
		msg := fmt.Sprintf("host key is unknown: the host presented %s, no key is pinned for it and %s; "+
			"check the fingerprint out of band, then pin it (sshHostPublicKey in the manifest, ssh_host_keys in the Terraform output)", got, where)
		if e.Record != "" {
			msg += " or allow trust on first use (--trust-unknown-hosts), which records it in " + e.Record
		}
		return msg
	}
	w := e.Want[0]
	msg := fmt.Sprintf("host key does not match: the host presented %s but %s expects %s; "+
		"this may be an attack, or the host was reinstalled", got, w.source(), fingerprint(w.Key))
	if w.File == "" {
		return msg + "; if the new key is right, update the pinned key"
	}
	return msg + fmt.Sprintf("; if the new key is right, remove line %d of %s (ssh-keygen -R %s -f %s)",
		w.Line, w.File, Quote(knownhosts.Normalize(e.Address)), Quote(w.File))
}

// hostKeys verifies host keys for one pool. Files are re-read on every
// handshake so that keys recorded by trust on first use, or by the user in
// another terminal, take effect without restarting.
type hostKeys struct {
	files  []string // user's known_hosts files, then the cluster file
	record string   // the cluster file; TOFU appends here
	tofu   bool
	mu     sync.Mutex // serialises appends to record
}

func (h *hostKeys) existing() []string {
	var out []string
	for _, f := range h.files {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// check verifies key for t. known lists what the files hold for t, so the
// handshake can ask only for those key types (otherwise a host with an
// ed25519 key on file that offers RSA first would look like a mismatch).
func (h *hostKeys) check(t Target, key xssh.PublicKey) error {
	if t.HostPublicKey != "" {
		pinned, _, _, _, err := xssh.ParseAuthorizedKey([]byte(t.HostPublicKey))
		if err != nil {
			return fmt.Errorf("parsing the pinned host key of %s: %w", t, err)
		}
		if string(pinned.Marshal()) == string(key.Marshal()) {
			return nil
		}
		return &HostKeyError{Host: t.String(), Address: t.addr(), Key: key, Want: []KnownKey{{Key: pinned}}}
	}
	files := h.existing()
	err := h.lookup(files, t, key)
	var ke *knownhosts.KeyError
	if err == nil || !errors.As(err, &ke) || len(ke.Want) > 0 || !h.tofu || h.record == "" {
		return h.refusal(files, t, key, err)
	}
	return h.remember(t, key)
}

// maxKnownHostsBytes bounds each known_hosts file, which is read on every handshake: a
// generous limit (about 100 000 hosts) that still stops an endless or runaway file.
const maxKnownHostsBytes = 64 << 20

func (h *hostKeys) lookup(files []string, t Target, key xssh.PublicKey) error {
	if len(files) == 0 {
		return &knownhosts.KeyError{}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		switch {
		case err != nil:
			return fmt.Errorf("reading known_hosts: %w", err)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("reading known_hosts: %s is not a regular file", f)
		case fi.Size() > maxKnownHostsBytes:
			return fmt.Errorf("reading known_hosts: %w", &bounded.TooLargeError{What: f, Max: maxKnownHostsBytes})
		}
	}
	cb, err := knownhosts.New(files...)
	if err != nil {
		return fmt.Errorf("reading known_hosts: %w", err)
	}
	// The remote address only matters when the hostname is empty; passing
	// the dialed address keeps lookups identical for bastion-reached hosts.
	return cb(t.addr(), fakeAddr(t.addr()), key)
}

func (h *hostKeys) refusal(files []string, t Target, key xssh.PublicKey, err error) error {
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	he := &HostKeyError{Host: t.String(), Address: t.addr(), Key: key, Searched: h.files}
	if h.record != "" {
		he.Record = h.record
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		he.Revoked = true
		he.Want = []KnownKey{{Key: re.Revoked.Key, File: re.Revoked.Filename, Line: re.Revoked.Line}}
	case errors.As(err, &ke):
		for _, w := range ke.Want {
			he.Want = append(he.Want, KnownKey{Key: w.Key, File: w.Filename, Line: w.Line})
		}
	default:
		return err
	}
	return he
}

// remember appends key for t to the cluster known_hosts file.
func (h *hostKeys) remember(t Target, key xssh.PublicKey) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Another goroutine may have recorded a key for t meanwhile; check again
	// so two parallel first contacts cannot record two different keys.
	if err := h.lookup(h.existing(), t, key); err == nil {
		return nil
	} else if ke := (*knownhosts.KeyError)(nil); errors.As(err, &ke) && len(ke.Want) > 0 {
		return h.refusal(h.existing(), t, key, err)
	}
	if err := os.MkdirAll(filepath.Dir(h.record), 0o700); err != nil {
		return fmt.Errorf("recording the host key of %s: %w", t, err)
	}
	f, err := os.OpenFile(h.record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("recording the host key of %s: %w", t, err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(t.addr())}, key) + "\n"
	_, werr := f.WriteString(line)
	return errors.Join(werr, f.Close())
}

// algorithms returns the host key algorithms to ask t for: the types of
// the pinned or recorded keys, or nil (the library default) when none.
func (h *hostKeys) algorithms(t Target) []string {
	var keys []xssh.PublicKey
	if t.HostPublicKey != "" {
		if k, _, _, _, err := xssh.ParseAuthorizedKey([]byte(t.HostPublicKey)); err == nil {
			keys = append(keys, k)
		}
	} else {
		var ke *knownhosts.KeyError
		if err := h.lookup(h.existing(), t, probeKey{}); errors.As(err, &ke) {
			for _, w := range ke.Want {
				keys = append(keys, w.Key)
			}
		}
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range keys {
		for _, a := range algorithmsFor(k.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

func algorithmsFor(keyType string) []string {
	switch keyType {
	case xssh.KeyAlgoRSA:
		return []string{xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, xssh.KeyAlgoRSA}
	case xssh.CertAlgoRSAv01:
		return []string{xssh.CertAlgoRSASHA512v01, xssh.CertAlgoRSASHA256v01, xssh.CertAlgoRSAv01}
	}
	return []string{keyType}
}

// probeKey matches no known key, so a lookup with it lists every key on
// file for the host.
type probeKey struct{}

func (probeKey) Type() string                         { return "slipway-probe" }
func (probeKey) Marshal() []byte                      { return []byte("slipway-probe") }
func (probeKey) Verify([]byte, *xssh.Signature) error { return errors.New("probe key") }

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

var _ net.Addr = fakeAddr("")
